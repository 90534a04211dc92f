import { z } from 'zod';
import type { Services } from './services.js';
import { attestedBatch } from './requester.js';
import { InputRejectedError } from '../domain/errors.js';
import { BatchRequest, TenantId } from '../domain/task.js';
import { scheduleRequester } from '../contracts/schedule-requester.js';

/**
 * The schedule's entry point. EventBridge Scheduler cannot sign, so it does
 * not start the batch workflow itself: it invokes the start-scheduled-batch
 * function (the only thing its role may do), which names the requester from
 * the tenant (`schedule:<prefix>-batch-<tenant>`), attests it like every other
 * entry point and starts the batch. ReadList accepts no requester unattested,
 * so a batch credited to a schedule was started by this function, and only
 * the scheduler's role (and the account's administrators) may invoke it
 * (docs/deploy.md, "Schedules").
 */

/** What a schedule sends: its tenant, and the time it fired (`<aws.scheduler.scheduled-time>`). */
export const ScheduledStart = z
  .object({
    tenant: TenantId,
    scheduledTime: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, 'the scheduled time is ISO 8601 in UTC, e.g. 2026-12-02T01:00:00Z'),
  })
  .strict();
export type ScheduledStart = z.infer<typeof ScheduledStart>;

const BATCH_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]+$/;

/** The batch state machine this entry point starts, from its environment (the CDK app sets it). */
export function batchStateMachineArn(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const arn = env['PAPERCLIP_BATCH_ARN'];
  if (!arn || !BATCH_ARN.test(arn)) {
    throw new Error(`PAPERCLIP_BATCH_ARN: set it to the batch state machine's ARN (arn:aws:states:<region>:<account>:stateMachine:<name>)`);
  }
  return arn;
}

/**
 * The execution of one schedule tick: its name is the task id (from the
 * scheduled time, colons dropped), so a retried or duplicated delivery joins
 * the execution the first one started instead of starting a second batch.
 */
export async function startScheduledBatch(
  s: Pick<Services, 'config' | 'secretStrings' | 'executions'>,
  start: ScheduledStart,
  batchArn: string,
): Promise<{ executionArn: string; taskId: string; requestedBy: string }> {
  if (!s.config.tenants.some((t) => t.id === start.tenant)) {
    throw new InputRejectedError(`tenant "${start.tenant}" is not configured; add it under tenants or drop its schedule`, 'tenant');
  }
  const request = BatchRequest.parse({
    tenant: start.tenant,
    taskId: `T-${start.tenant}-${start.scheduledTime.replace(/\.\d+Z$/, 'Z')}`,
    requestedBy: scheduleRequester(s.config.prefix, start.tenant),
  });
  const name = request.taskId;
  const input = await attestedBatch(s, { tenant: request.tenant, taskId: request.taskId, requestedBy: request.requestedBy }, name);
  const executionArn = await s.executions.start(batchArn, name, input, { ifExists: 'join' });
  return { executionArn, taskId: request.taskId, requestedBy: request.requestedBy };
}
