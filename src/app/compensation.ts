import type { Services } from './services.js';
import { TERMINAL_STATUSES, type Claim } from '../domain/claim.js';
import type { RoutedItem } from '../domain/routing.js';
import type { WriteTask } from '../domain/task.js';
import { idempotencyKey } from '../domain/task.js';
import { refreshItemEvidence } from '../evidence/item-closed.js';
import { own } from '../lib/own.js';
import { failureReason } from '../adapters/sfn/executions.js';

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
  /** True only when the inverse's own readback confirmed the registered pre-state. */
  rolledBack: boolean;
  executionArn: string;
  preStatus: string | null;
  restoredStatus: string | null;
  /** Set when an earlier compensation of the same write already succeeded; nothing ran this time. */
  alreadyCompensated?: boolean;
}

export function inverseTask(
  item: Pick<RoutedItem, 'taskId' | 'tenant' | 'billNo' | 'key'>,
  inverseAction: string,
  requestedBy: string,
): WriteTask {
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
  const executionArn = await s.executions.start(s.guardedWriteArn(), idempotencyKey(task), { task });
  // Inside the compensate Lambda's 5-minute timeout, so the wait ends with an answer, not a kill.
  const done = await s.executions.wait(executionArn, {
    timeoutMs: options.timeoutMs ?? 4 * 60_000,
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
  });
  if (done.timedOut) return { executionArn, output: { outcome: 'error', reason: 'timed out waiting for the execution' } };
  if (done.status === 'SUCCEEDED') return { executionArn, output: JSON.parse(done.output ?? '{}') };
  return { executionArn, output: { outcome: 'error', reason: failureReason(done) } };
}

/** A compensation that must not run; nothing was started. The message says why and what to do. */
export class CompensationRefusedError extends Error {
  override readonly name = 'CompensationRefusedError';
}

/** Claim statuses after which a write may have landed, so undoing it can make sense. */
const MAY_HAVE_WRITTEN: readonly Claim['status'][] = ['DONE', 'TAKEOVER', 'FAILED', 'WRITING'];

export interface CompensationRequest {
  key: string;
  requestedBy: string;
  reason: string;
  /** The guarded-write execution asking to undo its own write (the workflow's Compensate state). */
  executionArn?: string;
}

/** Why compensation must not run for this claim, or undefined when it may. */
function refusal(s: Services, claim: Claim | undefined, input: CompensationRequest): string | undefined {
  if (!claim) return `there is no write with key ${input.key}; take the key from the audit trail or the evidence folder`;
  const action = own(s.pack.actions, claim.action);
  if (action?.reversibility === 'irreversible') {
    return (
      `${claim.action} on ${claim.billNo} is irreversible: it has no inverse and cannot be compensated ` +
      `(irreversible actions are guarded by approval before they run; a mistake needs a person and the vendor)`
    );
  }
  if (!MAY_HAVE_WRITTEN.includes(claim.status)) return `${input.key} is ${claim.status}: nothing was written, so there is nothing to undo`;
  if (!claim.inverse)
    return `${input.key} registered no pre-state and inverse before its write, so there is no verified way back; hand it to a person`;
  const ownWrite = input.executionArn !== undefined && input.executionArn === claim.owner;
  if (claim.status === 'WRITING' && !ownWrite && Date.parse(claim.leaseUntil) > Date.now()) {
    return `${input.key} is still being written by ${claim.owner}; wait until it finishes`;
  }
  return undefined;
}

/**
 * Undoes a write through its registered inverse. The inverse runs as its own
 * guarded-write execution (claim, snapshot, evidence, independent readback);
 * the rollback counts only when that readback confirmed the inverse's target
 * and that target is the registered pre-state. Running it again for the same
 * write reports the earlier result instead of writing twice.
 */
export async function compensate(s: Services, input: CompensationRequest): Promise<CompensationResult> {
  const claim = await s.claims.get(input.key);
  const refused = refusal(s, claim, input);
  if (refused || !claim?.inverse) throw new CompensationRefusedError(refused ?? `${input.key} cannot be compensated`);
  const inverse = claim.inverse;
  const task = inverseTask({ ...claim }, inverse.action, input.requestedBy);
  const inverseKey = idempotencyKey(task);
  const restoredTo = own(s.pack.actions, inverse.action)?.targetStatus;
  const restoresPreState = inverse.targetStatus === undefined || restoredTo === inverse.targetStatus;
  const result = (outcome: string, executionArn: string): CompensationResult => ({
    compensates: claim.key,
    inverseKey,
    inverseAction: inverse.action,
    outcome,
    rolledBack: outcome === 'done' && restoresPreState,
    executionArn,
    preStatus: claim.preState?.status ?? inverse.targetStatus ?? null,
    restoredStatus: outcome === 'done' ? (restoredTo ?? null) : null,
  });

  const earlier = await s.claims.get(inverseKey);
  if (earlier) {
    if (earlier.status === 'DONE') return { ...result('done', earlier.owner), alreadyCompensated: true };
    throw new CompensationRefusedError(
      `${input.key} was already compensated once (${inverseKey}, now ${earlier.status}); ` +
        `a second automatic attempt could make things worse, so it is for a person now`,
    );
  }
  if (!restoresPreState) {
    throw new CompensationRefusedError(
      `the inverse ${inverse.action} leads to ${restoredTo ?? 'an undeclared status'}, ` +
        `not the registered pre-state ${inverse.targetStatus}; it cannot restore this write`,
    );
  }

  await s.audit.append(claim.key, {
    type: 'compensation_started',
    actor: input.requestedBy,
    data: {
      inverse: inverse.action,
      reason: input.reason,
      inverseKey,
      preStatus: claim.preState?.status ?? null,
      requestedBy: input.requestedBy,
    },
  });
  let run: Awaited<ReturnType<typeof runGuardedWrite>>;
  try {
    run = await runGuardedWrite(s, task);
  } catch (error) {
    await s.audit.append(claim.key, {
      type: 'compensation_failed',
      actor: input.requestedBy,
      data: { inverseKey, outcome: 'error', reason: (error as Error).message },
    });
    await refreshIfClosed(s, claim);
    throw error;
  }
  const done = result(run.output.outcome, run.executionArn);
  await s.audit.append(claim.key, {
    type: done.rolledBack ? 'compensated' : 'compensation_failed',
    actor: input.requestedBy,
    data: {
      inverseKey,
      outcome: done.outcome,
      reason: run.output.reason ?? null,
      executionArn: run.executionArn,
      preStatus: done.preStatus,
      restoredStatus: done.restoredStatus,
    },
  });
  await refreshIfClosed(s, claim);
  return done;
}

/**
 * A write that had already closed has its page (and, in a sealed batch, its
 * seal entry) from then; an auditor opening it must see it was undone. One the
 * workflow compensates itself is still open and renders its page when it closes.
 */
async function refreshIfClosed(s: Services, claim: Claim): Promise<void> {
  if (TERMINAL_STATUSES.includes(claim.status)) await refreshItemEvidence(s, claim);
}
