import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { Services } from './services.js';
import type { RoutedItem } from '../domain/routing.js';
import type { WriteTask } from '../domain/task.js';
import { idempotencyKey } from '../domain/task.js';

/**
 * Compensation runs an item's registered inverse through the same guarded
 * path: its own execution, claim, evidence and readback. Irreversible actions
 * have no inverse; their safety is the approval.
 */

export interface CompensationResult {
  compensates: string;
  inverseKey: string;
  inverseAction: string;
  outcome: string;
  rolledBack: boolean;
  executionArn: string;
}

export function inverseTask(item: Pick<RoutedItem, 'taskId' | 'tenant' | 'billNo' | 'key'>, inverseAction: string, requestedBy: string): WriteTask {
  return {
    taskId: item.taskId,
    tenant: item.tenant,
    billNo: item.billNo,
    action: inverseAction,
    params: {},
    requestedBy,
    compensates: item.key,
  };
}

/** Starts a guarded-write execution and waits for its outcome. */
export async function runGuardedWrite(
  s: Services,
  task: WriteTask,
  options: { pollMs?: number; timeoutMs?: number } = {},
): Promise<{ executionArn: string; output: { outcome: string; reason?: string } }> {
  const stateMachineArn = s.guardedWriteArn();
  const name = idempotencyKey(task);
  const started = await s.sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify({ task }) }));
  const executionArn = started.executionArn!;
  const deadline = Date.now() + (options.timeoutMs ?? 10 * 60_000);
  for (;;) {
    const described = await s.sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (described.status === 'SUCCEEDED') return { executionArn, output: JSON.parse(described.output ?? '{}') };
    if (described.status !== 'RUNNING') {
      return { executionArn, output: { outcome: 'error', reason: `${described.status}: ${described.error ?? ''} ${described.cause ?? ''}`.trim() } };
    }
    if (Date.now() > deadline) return { executionArn, output: { outcome: 'error', reason: 'timed out waiting for the execution' } };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
  }
}

/** Undoes a write whose claim registered an inverse; verified by the inverse's own readback. */
export async function compensate(s: Services, input: { key: string; requestedBy: string; reason: string }): Promise<CompensationResult> {
  const claim = await s.claims.get(input.key);
  if (!claim) throw new Error(`no claim ${input.key}`);
  if (!claim.inverse) throw new Error(`${input.key} (${claim.action}) registered no inverse; irreversible actions cannot be compensated`);
  const task = inverseTask({ ...claim }, claim.inverse.action, input.requestedBy);
  await s.audit.append(claim.key, {
    type: 'compensation_started',
    actor: input.requestedBy,
    data: { inverse: claim.inverse.action, reason: input.reason, inverseKey: idempotencyKey(task) },
  });
  const { executionArn, output } = await runGuardedWrite(s, task);
  const rolledBack = output.outcome === 'done';
  await s.audit.append(claim.key, {
    type: rolledBack ? 'compensated' : 'compensation_failed',
    actor: input.requestedBy,
    data: { inverseKey: idempotencyKey(task), outcome: output.outcome, reason: output.reason ?? null, executionArn },
  });
  return { compensates: claim.key, inverseKey: idempotencyKey(task), inverseAction: claim.inverse.action, outcome: output.outcome, rolledBack, executionArn };
}
