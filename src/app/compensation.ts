import type { Services } from './services.js';
import { TERMINAL_STATUSES, type Claim } from '../domain/claim.js';
import type { RoutedItem } from '../domain/routing.js';
import type { WriteTask } from '../domain/task.js';
import { idempotencyKey } from '../domain/task.js';
import { refreshItemEvidence } from '../evidence/item-closed.js';
import { attestCompensationStart, attestedTask } from './requester.js';
import { own } from '../lib/own.js';
import { failureReason } from './ports/executions.js';
import { NamedError } from '../domain/errors.js';

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
  const name = idempotencyKey(task);
  const executionArn = await s.executions.start(s.guardedWriteArn(), name, { task: await attestedTask(s, task, name) });
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
export class CompensationRefusedError extends NamedError {
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
 * What is known once a compensation may go ahead: the inverse task to run as
 * its own guarded-write execution (named by its idempotency key), and what a
 * verified run of it restores. `result` is set instead when an earlier
 * compensation of the same write already succeeded: nothing is run again.
 */
export interface PreparedCompensation {
  compensates: string;
  inverseKey: string;
  inverseAction: string;
  /** The guarded-write input of the inverse: `{ task }`, started under the name `inverseKey`. */
  task: WriteTask;
  preStatus: string | null;
  restoredTo: string | null;
  requestedBy: string;
  start: boolean;
  result: CompensationResult | null;
}

/** How the inverse's execution ended: its output, or why there is none. */
export type InverseRun =
  | { executionArn: string; output: { outcome: string; reason?: string } }
  | { failure: string; executionArn?: string };

function resultOf(prepared: PreparedCompensation, outcome: string, executionArn: string): CompensationResult {
  return {
    compensates: prepared.compensates,
    inverseKey: prepared.inverseKey,
    inverseAction: prepared.inverseAction,
    outcome,
    // Counts only when the inverse's own readback confirmed its target, which is the registered pre-state (checked when prepared).
    rolledBack: outcome === 'done',
    executionArn,
    preStatus: prepared.preStatus,
    restoredStatus: outcome === 'done' ? prepared.restoredTo : null,
  };
}

/**
 * The checks before undoing a write, and the opening of the compensation in
 * its audit trail (which the inverse's routing requires, see
 * compensation-path.ts). Refusals throw CompensationRefusedError, and nothing
 * has started. Running it again for a write already compensated reports the
 * earlier result instead of writing twice.
 */
export async function prepareCompensation(s: Services, input: CompensationRequest): Promise<PreparedCompensation> {
  const claim = await s.claims.get(input.key);
  const refused = refusal(s, claim, input);
  if (refused || !claim?.inverse) throw new CompensationRefusedError(refused ?? `${input.key} cannot be compensated`);
  const inverse = claim.inverse;
  const task = inverseTask({ ...claim }, inverse.action, input.requestedBy);
  const inverseKey = idempotencyKey(task);
  const restoredTo = own(s.pack.actions, inverse.action)?.targetStatus;
  const prepared: PreparedCompensation = {
    compensates: claim.key,
    inverseKey,
    inverseAction: inverse.action,
    // Whoever runs it (the workflow's RunInverse, or the CLI), the inverse's requester is attested for its own execution.
    task: await attestedTask(s, task, inverseKey),
    preStatus: claim.preState?.status ?? inverse.targetStatus ?? null,
    restoredTo: restoredTo ?? null,
    requestedBy: input.requestedBy,
    start: true,
    result: null,
  };

  const earlier = await s.claims.get(inverseKey);
  if (earlier) {
    if (earlier.status === 'DONE') {
      return { ...prepared, start: false, result: { ...resultOf(prepared, 'done', earlier.owner), alreadyCompensated: true } };
    }
    throw new CompensationRefusedError(
      `${input.key} was already compensated once (${inverseKey}, now ${earlier.status}); ` +
        `a second automatic attempt could make things worse, so it is for a person now`,
    );
  }
  if (inverse.targetStatus !== undefined && restoredTo !== inverse.targetStatus) {
    throw new CompensationRefusedError(
      `the inverse ${inverse.action} leads to ${restoredTo ?? 'an undeclared status'}, ` +
        `not the registered pre-state ${inverse.targetStatus}; it cannot restore this write`,
    );
  }

  // Signed like the requester: routing admits the inverse only on an open start that carries this (compensation-path.ts).
  const attestation = await attestCompensationStart(s, {
    compensates: claim.key,
    inverseKey,
    inverseAction: inverse.action,
    requestedBy: input.requestedBy,
  });
  await s.audit.append(claim.key, {
    type: 'compensation_started',
    actor: input.requestedBy,
    data: {
      inverse: inverse.action,
      reason: input.reason,
      inverseKey,
      preStatus: claim.preState?.status ?? null,
      requestedBy: input.requestedBy,
      attestation,
    },
  });
  return prepared;
}

/**
 * Closes a compensation in the write's audit trail with how the inverse's
 * execution ended: `compensated` only when its readback confirmed the pre-state.
 */
export async function recordCompensation(s: Services, prepared: PreparedCompensation, run: InverseRun): Promise<CompensationResult> {
  if (prepared.result) return prepared.result;
  const done =
    'failure' in run ? resultOf(prepared, 'error', run.executionArn ?? '') : resultOf(prepared, run.output.outcome, run.executionArn);
  const reason = 'failure' in run ? run.failure : (run.output.reason ?? null);
  await s.audit.append(prepared.compensates, {
    type: done.rolledBack ? 'compensated' : 'compensation_failed',
    actor: prepared.requestedBy,
    data: {
      inverseKey: prepared.inverseKey,
      outcome: done.outcome,
      reason,
      executionArn: done.executionArn,
      preStatus: done.preStatus,
      restoredStatus: done.restoredStatus,
    },
  });
  const claim = await s.claims.get(prepared.compensates);
  if (claim) await refreshIfClosed(s, claim);
  return done;
}

/**
 * Undoes a write through its registered inverse, waiting here for the
 * inverse's execution (the operator's `paperclip compensate` and the drill).
 * The workflow's own Compensate path runs the same two steps around a nested
 * execution instead, so no function waits (statemachines/guarded-write.asl.json).
 */
export async function compensate(s: Services, input: CompensationRequest): Promise<CompensationResult> {
  const prepared = await prepareCompensation(s, input);
  if (!prepared.start) return recordCompensation(s, prepared, { failure: 'not run' });
  let run: InverseRun;
  try {
    run = await runGuardedWrite(s, prepared.task);
  } catch (error) {
    await recordCompensation(s, prepared, { failure: (error as Error).message });
    throw error;
  }
  return recordCompensation(s, prepared, run);
}

/**
 * A write that had already closed has its page (and, in a sealed batch, its
 * seal entry) from then; an auditor opening it must see it was undone. One the
 * workflow compensates itself is still open and renders its page when it closes.
 */
async function refreshIfClosed(s: Services, claim: Claim): Promise<void> {
  if (TERMINAL_STATUSES.includes(claim.status)) await refreshItemEvidence(s, claim);
}

/**
 * How the workflow's RunInverse ended, from what it put in the state: its
 * ResultSelector's `{ executionArn, status, output }`, or its Catch's
 * `{ Error, Cause }`, whose Cause (for a child that failed, timed out or was
 * aborted) is the child's DescribeExecution as JSON.
 */
export function inverseRunFromWorkflow(run: unknown): InverseRun {
  const r = (run ?? {}) as Record<string, unknown>;
  const output = r['output'] as { outcome?: unknown; reason?: unknown } | null | undefined;
  if (typeof r['executionArn'] === 'string' && r['status'] === 'SUCCEEDED' && typeof output?.outcome === 'string') {
    return {
      executionArn: r['executionArn'],
      output: { outcome: output.outcome, ...(typeof output.reason === 'string' ? { reason: output.reason } : {}) },
    };
  }
  if (typeof r['Error'] === 'string') {
    const cause = typeof r['Cause'] === 'string' ? r['Cause'] : '';
    try {
      const child = JSON.parse(cause) as { ExecutionArn?: unknown; Status?: unknown; Error?: unknown; Cause?: unknown };
      if (typeof child.ExecutionArn === 'string') {
        return {
          executionArn: child.ExecutionArn,
          failure: failureReason({
            status: String(child.Status ?? 'FAILED'),
            ...(typeof child.Error === 'string' ? { error: child.Error } : {}),
            ...(typeof child.Cause === 'string' ? { cause: child.Cause } : {}),
          }),
        };
      }
    } catch {
      // Not a DescribeExecution: the start itself failed (e.g. the name was taken); the error says why.
    }
    return { failure: `${r['Error']}: ${cause}`.trim() };
  }
  return { failure: 'the inverse execution did not run' };
}
