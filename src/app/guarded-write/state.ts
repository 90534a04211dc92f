import { z } from 'zod';
import { RoutedItem } from '../../domain/routing.js';
import { WriteTask } from '../../domain/task.js';
import { StoredObject } from '../ports/evidence.js';
import { SourceObservation } from '../../domain/known-facts.js';

/**
 * What the guarded-write workflow (statemachines/guarded-write.asl.json)
 * carries between its states and hands to each Lambda, as zod schemas; the
 * TypeScript types are inferred from them. ValidateRoute's ResultSelector
 * sets every result that is not there yet to null, so those fields are
 * present and nullable, not optional. Every handler parses its event with
 * the schema of its state, so a state the ASL did not build is refused with
 * the field that is wrong.
 */

/** What a Catch clause puts at its ResultPath: the error name the Lambda reported and its cause. */
export const StepFailure = z.object({ Error: z.string(), Cause: z.string().optional() });
export type StepFailure = z.infer<typeof StepFailure>;

export const ClaimRef = z.object({ owner: z.string().min(1), version: z.number().int().min(1) });
export type ClaimRef = z.infer<typeof ClaimRef>;

export const ClaimDecision = z.discriminatedUnion('decision', [
  z.object({ decision: z.literal('proceed'), claim: ClaimRef }),
  z.object({ decision: z.literal('readback_first'), claim: ClaimRef }),
  z.object({ decision: z.literal('skip'), reason: z.string(), status: z.string().optional() }),
  /** Another key's write on the same item (tenant, bill) is unresolved: this key's claim moved to BLOCKED, nothing written. */
  z.object({ decision: z.literal('blocked'), reason: z.string(), openKey: z.string(), openStatus: z.string(), claim: ClaimRef }),
]);
export type ClaimDecision = z.infer<typeof ClaimDecision>;

export const SnapshotResult = z.object({
  stale: z.boolean(),
  preStatus: z.string().optional(),
  source: z.string(),
  evidence: z.array(StoredObject),
  /** The vendor's own figures the pack names for the action (`approval.show`, `confirm.equals`), read here, never from the task. */
  figures: z.record(z.string(), z.string()).optional(),
});
export type SnapshotResult = z.infer<typeof SnapshotResult>;

/** What the approval page hands the waiting RequestApproval task on approval. */
export const ApprovalOutput = z.object({ approvalId: z.string().min(1), approver: z.string().min(1), decidedAt: z.string().min(1) });
export type ApprovalOutput = z.infer<typeof ApprovalOutput>;

export const WriteResult = z.object({
  tier: z.string(),
  committed: z.literal(true),
  evidence: z.array(StoredObject),
  dialogs: z.array(z.object({ type: z.string(), message: z.string(), accepted: z.boolean() })),
  /** Whether the after picture shows the page settled in the target state (browser tier; absent: it does not). */
  afterSettled: z.boolean().optional(),
  /** The approval the write proved before it started (irreversible actions). */
  approval: z.object({ approvalId: z.string(), approver: z.string(), decidedAt: z.string() }).optional(),
});
export type WriteResult = z.infer<typeof WriteResult>;

export const ReadbackOutcome = z.object({
  verdict: z.enum(['confirmed', 'not_applied', 'unknown']),
  observedStatus: z.string().optional(),
  source: z.string(),
  observations: z.array(z.object({ status: z.string().optional(), at: z.string(), source: z.string(), error: z.string().optional() })),
  reason: z.string(),
  next: z.enum(['complete', 'retry', 'compensate', 'takeover']),
  why: z.string(),
  degraded: z.boolean(),
  evidence: z.array(StoredObject),
  /** Each readback source's last reading (src/domain/reason.ts); absent in a state from before it was recorded. */
  sources: z.array(SourceObservation).optional(),
});
export type ReadbackOutcome = z.infer<typeof ReadbackOutcome>;

/** A compensation's result (see src/app/compensation.ts). */
export const CompensationResult = z.object({
  compensates: z.string(),
  inverseKey: z.string(),
  inverseAction: z.string(),
  outcome: z.string(),
  rolledBack: z.boolean(),
  executionArn: z.string(),
  preStatus: z.string().nullable(),
  restoredStatus: z.string().nullable(),
  alreadyCompensated: z.boolean().optional(),
});

/** What Compensate hands the workflow: the inverse to start as a nested guarded-write execution (see PreparedCompensation). */
export const PreparedCompensation = z.object({
  compensates: z.string(),
  inverseKey: z.string(),
  inverseAction: z.string(),
  task: WriteTask,
  preStatus: z.string().nullable(),
  restoredTo: z.string().nullable(),
  requestedBy: z.string(),
  start: z.boolean(),
  result: CompensationResult.nullable(),
});

/** What RecordCompensation returns, or the failure a Catch of the Compensate path put there. */
export const CompensationOutcome = z.union([CompensationResult, StepFailure]);
export type CompensationOutcome = z.infer<typeof CompensationOutcome>;

/** The state every step after routing receives: the item and each step's result, null until that step ran. */
export const ItemState = z
  .object({
    item: RoutedItem,
    claim: ClaimDecision.nullable(),
    snapshot: SnapshotResult.nullable(),
    approval: ApprovalOutput.nullable(),
    write: WriteResult.nullable(),
    writeError: StepFailure.nullable(),
    readback: ReadbackOutcome.nullable(),
    takeoverReason: StepFailure.nullable(),
    compensation: CompensationOutcome.nullable(),
  })
  .strict();
export type ItemState = z.infer<typeof ItemState>;

/** `$$.Execution.Id`, which every workflow hands its Lambdas so they can name the run that acts. */
export const ExecutionArn = z.string().min(1);

/** The input of each Lambda, by the ASL state that invokes it. */
export const StepInput = {
  ValidateRoute: z.object({ task: z.unknown(), executionArn: ExecutionArn }).strict(),
  /** Claim hands back the whole state (claim, and the pre-state when routing's read gives it), so it gets the whole state. */
  Claim: z.object({ state: ItemState, executionArn: ExecutionArn }).strict(),
  Snapshot: ItemState,
  RequestApproval: z.object({ state: ItemState, taskToken: z.string().min(1), executionArn: ExecutionArn }).strict(),
  BrowserWrite: ItemState,
  Readback: ItemState,
  /**
   * Compensate opens the compensation and returns the inverse to run (prepare); the workflow runs it as a
   * nested guarded-write execution and waits (`.sync:2`); RecordCompensation closes it with how that ended (record).
   */
  Compensate: z.discriminatedUnion('phase', [
    z.object({ phase: z.literal('prepare'), item: RoutedItem, executionArn: ExecutionArn }).strict(),
    z
      .object({
        phase: z.literal('record'),
        item: RoutedItem,
        executionArn: ExecutionArn,
        prepared: PreparedCompensation,
        /** RunInverse's result, its Catch's `{ Error, Cause }`, or null when nothing had to run. */
        run: z.unknown(),
      })
      .strict(),
  ]),
  /** Complete, Stale, Blocked, ApprovalRejected and ApprovalExpired: one Lambda closes the item five ways. */
  Complete: z
    .object({
      state: ItemState,
      executionArn: ExecutionArn,
      closeAs: z.enum(['done', 'stale', 'rejected', 'expired', 'blocked']),
      reason: z.string().optional(),
    })
    .strict(),
  Takeover: z.object({ state: ItemState, executionArn: ExecutionArn }).strict(),
} as const;

export type CloseAs = z.infer<typeof StepInput.Complete>['closeAs'];

/** What an item's execution ends with: the batch counts these. */
export interface ItemOutcome {
  outcome: string;
  key: string;
  billNo?: string;
  reason?: string;
}
