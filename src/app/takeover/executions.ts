import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { WriteTask } from '../../domain/task.js';

/**
 * Starting guarded-write executions for an item that already has a claim.
 * The key-named execution exists already (Step Functions keeps names), so an
 * operator's retry or a resumed orphan runs under a derived name; the claim,
 * not the name, is what keeps the write to one.
 */

export function executionArnFor(stateMachineArn: string, name: string): string {
  const match = /^(arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}):stateMachine:([^:]+)$/.exec(stateMachineArn);
  if (!match) throw new Error(`not a state machine ARN: ${stateMachineArn}`);
  return `${match[1]}:execution:${match[2]}:${name}`;
}

/** `<key>-<purpose>-v<version>`: one name per fencing version, so two processes resuming the same claim collide on the name. */
export function derivedExecutionName(key: string, purpose: 'retry' | 'resume', version: number): string {
  return `${key}-${purpose}-v${version}`;
}

export async function executionStatus(
  s: Services,
  executionArn: string,
): Promise<{ status: string; input?: string; error?: string; cause?: string } | undefined> {
  try {
    const d = await s.sfn.send(new DescribeExecutionCommand({ executionArn }));
    return { status: d.status ?? 'UNKNOWN', input: d.input, error: d.error, cause: d.cause };
  } catch (error) {
    if ((error as Error).name === 'ExecutionDoesNotExist') return undefined;
    throw error;
  }
}

/**
 * The task a claim was taken for: the input of the execution that holds it,
 * else the routed item in the audit chain. Parsed again, as any input is.
 */
export async function originalTask(s: Services, claim: Claim): Promise<WriteTask> {
  const execution = await executionStatus(s, claim.owner).catch(() => undefined);
  const fromExecution = execution?.input ? (JSON.parse(execution.input) as { task?: unknown }).task : undefined;
  let raw: unknown = fromExecution;
  if (!raw) {
    const routed = (await s.audit.events(claim.key)).find((e) => e.type === 'routed');
    const item = routed?.data['item'] as Record<string, unknown> | undefined;
    if (item) {
      raw = {
        taskId: item['taskId'],
        tenant: item['tenant'],
        billNo: item['billNo'],
        action: item['action'],
        params: item['params'],
        requestedBy: item['requestedBy'],
        ...(item['compensates'] ? { compensates: item['compensates'] } : {}),
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

export async function startNamedExecution(s: Services, name: string, task: WriteTask): Promise<string> {
  const started = await s.sfn.send(
    new StartExecutionCommand({ stateMachineArn: s.guardedWriteArn(), name, input: JSON.stringify({ task }) }),
  );
  return started.executionArn!;
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
  const deadline = Date.now() + (options.timeoutMs ?? 10 * 60_000);
  for (;;) {
    const d = await s.sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status === 'SUCCEEDED') {
      const output = JSON.parse(d.output ?? '{}') as { outcome?: string; reason?: string };
      return {
        executionArn,
        status: 'SUCCEEDED',
        outcome: output.outcome ?? 'unknown',
        ...(output.reason ? { reason: output.reason } : {}),
      };
    }
    if (d.status !== 'RUNNING') {
      return {
        executionArn,
        status: d.status ?? 'UNKNOWN',
        outcome: 'error',
        reason: `${d.status}: ${d.error ?? ''} ${d.cause ?? ''}`.trim(),
      };
    }
    if (Date.now() > deadline) return { executionArn, status: 'RUNNING', outcome: 'error', reason: 'timed out waiting for the execution' };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
  }
}
