import type { ReadbackResult } from './readback.js';
import { failureMessage, WriteNotCommittedError } from './errors.js';

/**
 * What happens after an independent readback: the one decision that turns a
 * verdict into complete, another attempt, an undo or a person. Pure, so every
 * branch is testable without a browser or a workflow.
 */

export type NextAfterReadback = 'complete' | 'retry' | 'compensate' | 'takeover';

/** The part of the workflow state the decision reads. The workflow initialises absent results to null. */
export interface StateAtReadback {
  item: { reversibility: string; inverse?: string | null | undefined };
  snapshot?: { preStatus?: string | null | undefined } | null;
  write?: object | null;
  writeError?: { Error: string; Cause?: string } | null;
}

export interface RetryPolicy {
  retry_after_negative_readback: boolean;
  max_write_attempts: number;
}

export function decideNext(
  result: ReadbackResult,
  state: StateAtReadback,
  policy: RetryPolicy,
  attempts: number,
): { next: NextAfterReadback; why: string } {
  if (result.verdict === 'confirmed') return { next: 'complete', why: result.reason };
  // How the write ended, when it failed: the cause comes first, so no readback summary hides it.
  const writeFailed = state.writeError ? `${failureMessage(state.writeError)}; ` : '';
  if (result.verdict === 'unknown') return { next: 'takeover', why: `${writeFailed}readback inconclusive: ${result.reason}` };
  const preStatus = state.snapshot?.preStatus ?? undefined;
  if (preStatus !== undefined && result.observedStatus !== preStatus && state.item.reversibility === 'reversible' && state.item.inverse) {
    return { next: 'compensate', why: `the item settled on ${result.observedStatus}, neither ${preStatus} nor the target: undo it` };
  }
  const refusedBeforeCommit = state.writeError?.Error === WriteNotCommittedError.errorName;
  // A run that starts at Readback carries write: null and writeError: null (the workflow's initial values).
  const resumedAfterCrash = state.write == null && state.writeError == null;
  if ((refusedBeforeCommit || resumedAfterCrash) && policy.retry_after_negative_readback && attempts < policy.max_write_attempts) {
    return { next: 'retry', why: `settled negative readback (${result.reason}) and the action's policy allows another attempt` };
  }
  if (state.write) {
    return { next: 'takeover', why: `false success: the write reported success but ${result.reason}` };
  }
  if (state.writeError) return { next: 'takeover', why: `${writeFailed}readback: ${result.reason}` };
  return { next: 'takeover', why: `write did not land: ${result.reason}` };
}
