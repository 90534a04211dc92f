import {
  AmbiguousOutcomeError,
  ApprovalNotProvenError,
  SessionLostError,
  StructuredContractMissingError,
  VendorSessionsBusyError,
  WriteNotCommittedError,
} from './errors.js';
import { StageUnprovenError } from './stage-proof.js';

/**
 * The product's core rule about a write that failed: where it stood relative to its commit click decides what the
 * failure means. Pure, so the rule is tested without a browser; the browser write (src/app/guarded-write/write.ts)
 * only says where it stood.
 *
 * - `before_commit`: the commit click was not dispatched. The claim never moved to WRITING, or the commit target
 *   was never found (its dialog did not open, its button is gone): the vendor's state is unchanged as far as this
 *   process knows, so the failure is "not committed" and a settled negative readback may be followed by another
 *   attempt.
 * - `after_commit`: the claim moved to WRITING and the commit click was, or may have been, dispatched: the write may
 *   have landed, so the failure is "ambiguous" and only an independent readback decides.
 */
export type CommitPoint = 'before_commit' | 'after_commit';

/** The error a failed write step reports for `error`, thrown at `point`. */
export function writeFailure(error: unknown, point: CommitPoint): Error {
  const cause = error instanceof Error ? error : new Error(String(error));
  // A stage's done check that cannot prove what it sees goes to a person on either side: after the commit, calling it
  // ambiguous would let a negative readback retry the stage into a second click.
  if (cause instanceof StageUnprovenError) return cause;
  if (point === 'before_commit') {
    // These name their own next step (a person looks at the pack, the session or the approval): kept as they are.
    if (cause instanceof StructuredContractMissingError || cause instanceof SessionLostError || cause instanceof ApprovalNotProvenError)
      return cause;
    // The vendor-session slot was lost before the click (src/app/session-slots.ts): nothing clicked, and the workflows
    // retry the step with a slot of its own, as when none was free.
    if (cause instanceof VendorSessionsBusyError) return cause;
    return new WriteNotCommittedError(`write failed before the commit click: ${cause.message}`, {}, { cause });
  }
  // After the click, only what already says what happened is kept: a lost session, the vendor's own refusal or timeout.
  if (cause instanceof SessionLostError || cause instanceof WriteNotCommittedError || cause instanceof AmbiguousOutcomeError) return cause;
  return new AmbiguousOutcomeError(`write may have landed: ${cause.message}`, {}, { cause });
}
