import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { KEY_PATTERN, WriteTask } from '../../domain/task.js';
import { eventsOfType } from '../../domain/audit-events.js';
import { failureReason } from '../ports/executions.js';
import { attestedTask } from '../requester.js';

export { executionArnFor } from '../ports/executions.js';

/**
 * Starting guarded-write executions for an item that already has a claim.
 * The key-named execution exists already (Step Functions keeps names), so an
 * operator's retry or a resumed orphan runs under a derived name; the claim,
 * not the name, is what keeps the write to one.
 */

/** `<key>-<purpose>-v<version>`: one name per fencing version, so two processes resuming the same claim collide on the name. */
export function derivedExecutionName(key: string, purpose: ExecutionPurpose, version: number): string {
  return `${key}-${purpose}-v${version}`;
}

/**
 * Why a derived execution runs: an operator's retry, a resumed orphaned claim, or a restart of an item whose
 * execution ended before anything claimed it (then `version` counts the restarts, there being no claim version).
 */
export type ExecutionPurpose = 'retry' | 'resume' | 'restart';

/** The idempotency key an execution name was made from (the key itself, or derivedExecutionName's), else undefined. */
export function keyOfExecutionName(name: string): { key: string; purpose?: ExecutionPurpose; version?: number } | undefined {
  const match = /^(.+?)(?:-(retry|resume|restart)-v(\d+))?$/.exec(name);
  if (!match || !KEY_PATTERN.test(match[1]!)) return undefined;
  return match[2] ? { key: match[1]!, purpose: match[2] as ExecutionPurpose, version: Number(match[3]) } : { key: match[1]! };
}

/**
 * The task a claim was taken for: the input of the execution that holds it,
 * else the routed item in the audit chain. Parsed again, as any input is.
 */
export async function originalTask(s: Services, claim: Claim): Promise<WriteTask> {
  const execution = await s.executions.describe(claim.owner).catch(() => undefined);
  const fromExecution = execution?.input ? (JSON.parse(execution.input) as { task?: unknown }).task : undefined;
  let raw: unknown = fromExecution;
  if (!raw) {
    const item = eventsOfType(await s.audit.events(claim.key), 'routed')[0]?.data.item;
    if (item) {
      raw = {
        taskId: item.taskId,
        tenant: item.tenant,
        billNo: item.billNo,
        action: item.action,
        params: item.params,
        requestedBy: item.requestedBy,
        ...(item.compensates ? { compensates: item.compensates } : {}),
      };
    }
  }
  const parsed = WriteTask.safeParse(raw);
  if (!parsed.success)
    throw new Error(`cannot reconstruct the task of ${claim.key}: neither its execution nor its audit chain holds a valid task`);
  const task = parsed.data;
  if (task.taskId !== claim.taskId || task.billNo !== claim.billNo || task.action !== claim.action || task.tenant !== claim.tenant) {
    throw new Error(`the recorded task of ${claim.key} does not match its claim (${task.taskId} ${task.billNo} ${task.action})`);
  }
  return task;
}

/**
 * Starts the guarded write of `task` under `name`. With `ifExists: 'join'`, a
 * name another process took already is that process's run, not an error.
 */
export async function startNamedExecution(
  s: Services,
  name: string,
  task: WriteTask,
  options: { ifExists?: 'fail' | 'join' } = {},
): Promise<string> {
  // A retry is asked by whoever resolves the takeover: attested afresh for this execution (an old attestation names another).
  return s.executions.start(s.guardedWriteArn(), name, { task: await attestedTask(s, task, name) }, options);
}

export interface ExecutionResult {
  executionArn: string;
  status: string;
  outcome: string;
  reason?: string;
}

export async function waitForExecution(
  s: Services,
  executionArn: string,
  options: { pollMs?: number; timeoutMs?: number } = {},
): Promise<ExecutionResult> {
  const done = await s.executions.wait(executionArn, {
    timeoutMs: options.timeoutMs ?? 10 * 60_000,
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
  });
  if (done.timedOut) return { executionArn, status: 'RUNNING', outcome: 'error', reason: 'timed out waiting for the execution' };
  if (done.status !== 'SUCCEEDED') return { executionArn, status: done.status, outcome: 'error', reason: failureReason(done) };
  const output = JSON.parse(done.output ?? '{}') as { outcome?: string; reason?: string };
  return { executionArn, status: 'SUCCEEDED', outcome: output.outcome ?? 'unknown', ...(output.reason ? { reason: output.reason } : {}) };
}
