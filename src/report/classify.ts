import type { AuditEvent } from '../domain/audit-chain.js';
import { eventsOfType, hasType, isEvent } from '../domain/audit-events.js';
import type { Claim } from '../domain/claim.js';
import { SessionLostError } from '../domain/errors.js';

/**
 * What one item's claim and audit chain show, in the terms of the four
 * metrics. The same function feeds `paperclip report` and the per-item
 * CloudWatch metrics, so the dashboard and the report count alike.
 * Definitions: docs/report.md.
 */

export type ItemOutcome =
  | 'done'
  | 'takeover'
  | 'stale'
  | 'rejected'
  | 'expired'
  | 'blocked'
  | 'awaiting_approval'
  | 'in_progress'
  | 'failed';

export interface ItemFacts {
  key: string;
  tenant: string;
  taskId: string;
  billNo: string;
  action: string;
  outcome: ItemOutcome;
  /** This item is the inverse write of another one (a compensation run). */
  compensates?: string;
  /** Commits made: one per `write_started` (the claim moved to WRITING right before the commit click / API call). */
  commits: number;
  /** The readback showed a state that is neither the pre-state nor the target: the write changed something it should not have. */
  unintendedState: boolean;
  /** A second commit for the same key without a settled negative readback before it: possibly two vendor mutations. */
  unprovenRecommit: boolean;
  /** The recorded outcome contradicts the readback (done without a confirmed readback, or confirmed yet not done). */
  outcomeContradicted: boolean;
  /** The write reported success and the independent readback settled on "not applied" (caught, sent to takeover). */
  falseSuccessCaught: boolean;
  misoperation: boolean;
  compensation?: { attempted: number; succeeded: number };
  sessionLost: boolean;
  degraded: boolean;
  /** From the pre-state read to the last readback: while this item's write was in flight. */
  inFlight?: { from: string; to: string };
  createdAt: string;
  updatedAt: string;
}

function outcomeOf(claim: Claim, events: readonly AuditEvent[]): ItemOutcome {
  switch (claim.status) {
    case 'DONE':
      return 'done';
    case 'TAKEOVER':
      return 'takeover';
    case 'STALE':
      return 'stale';
    case 'REJECTED':
      return 'rejected';
    case 'EXPIRED':
      return 'expired';
    case 'BLOCKED':
      return 'blocked';
    case 'FAILED':
      return 'failed';
    default: {
      const asked = events.some((e) => hasType(e, 'approval_requested'));
      const decided = events.some((e) => hasType(e, 'approved', 'rejected', 'expired', 'write_started'));
      return asked && !decided ? 'awaiting_approval' : 'in_progress';
    }
  }
}

export function classifyItem(claim: Claim, events: readonly AuditEvent[]): ItemFacts {
  const outcome = outcomeOf(claim, events);
  const preStatus = eventsOfType(events, 'pre_state_registered')[0]?.data.preStatus ?? claim.preState?.status;

  let commits = 0;
  let unprovenRecommit = false;
  let falseSuccessCaught = false;
  let unintendedState = false;
  let degraded = false;
  let sessionLost = false;
  // Whether the vendor is known not to have applied the previous commit.
  let previousCommitDisproved = true;
  let writeFailedSinceCommit = false;
  let lastVerdict: string | undefined;
  for (const event of events) {
    switch (event.type) {
      case 'write_started':
        if (commits > 0 && !previousCommitDisproved) unprovenRecommit = true;
        commits += 1;
        previousCommitDisproved = false;
        writeFailedSinceCommit = false;
        break;
      case 'write_failed':
        writeFailedSinceCommit = true;
        if (isEvent(event, 'write_failed') && event.data.error === SessionLostError.errorName) sessionLost = true;
        break;
      case 'readback': {
        if (!isEvent(event, 'readback')) break;
        lastVerdict = String(event.data.verdict ?? '');
        if (event.data.degraded === true) degraded = true;
        const observed = event.data.observed;
        if (event.data.next === 'compensate') unintendedState = true;
        if (lastVerdict === 'not_applied' && (preStatus === undefined || observed === preStatus)) previousCommitDisproved = true;
        if (commits > 0 && lastVerdict === 'not_applied' && !writeFailedSinceCommit && event.data.next === 'takeover')
          falseSuccessCaught = true;
        break;
      }
      case 'takeover':
        if (isEvent(event, 'takeover') && event.data.error === SessionLostError.errorName) sessionLost = true;
        break;
    }
  }
  const completed = events.some((e) => hasType(e, 'completed'));
  const outcomeContradicted =
    (claim.status === 'DONE' && (lastVerdict !== 'confirmed' || !completed)) || (completed && claim.status !== 'DONE');

  const started = events.filter((e) => hasType(e, 'compensation_started')).length;
  const succeeded = events.filter((e) => hasType(e, 'compensated')).length;
  const compensates = eventsOfType(events, 'routed')[0]?.data.item?.compensates;

  const preRead = events.find((e) => hasType(e, 'pre_state_registered'))?.at;
  const lastReadback = events.findLast((e) => hasType(e, 'readback'))?.at;
  return {
    key: claim.key,
    tenant: claim.tenant,
    taskId: claim.taskId,
    billNo: claim.billNo,
    action: claim.action,
    outcome,
    ...(compensates ? { compensates } : {}),
    commits,
    unintendedState,
    unprovenRecommit,
    outcomeContradicted,
    falseSuccessCaught,
    misoperation: unintendedState || unprovenRecommit || outcomeContradicted,
    ...(started > 0 ? { compensation: { attempted: started, succeeded } } : {}),
    sessionLost,
    degraded,
    ...(preRead && commits > 0 ? { inFlight: { from: preRead, to: lastReadback ?? events.at(-1)!.at } } : {}),
    createdAt: claim.createdAt,
    updatedAt: claim.updatedAt,
  };
}
