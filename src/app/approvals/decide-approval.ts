import type { Services } from '../services.js';
import type { ApprovalRequest } from '../ports/approvals.js';
import { canonicalPrincipal } from '../../domain/principal.js';
import { oneLine } from '../../lib/one-line.js';
import type { ApprovalOutput } from '../guarded-write/state.js';
import { TASK_FAILURES, NamedError } from '../../domain/errors.js';
import { approvalRequestsOf } from './request-approval.js';
import type { DecisionSignIn } from '../../domain/sign-in-policy.js';

/**
 * The approval decision, independent of HTTP: who may see a request, who may
 * decide it, and the order in which a decision becomes effective (table, then
 * audit trail, then the waiting workflow).
 */

export type RefusalCode = 'not_found' | 'expired' | 'self_approval' | 'not_an_approver' | 'already_decided';

/** A request the approval flow refuses; nothing was changed. `status` is the HTTP status it maps to. */
export class ApprovalRefusedError extends NamedError {
  override readonly name = 'ApprovalRefusedError';
  constructor(
    readonly code: RefusalCode,
    readonly status: 403 | 404 | 409 | 410,
    message: string,
    /** Present when the request exists and the approver may know about it (e.g. who already decided). */
    readonly request?: ApprovalRequest,
  ) {
    super(message);
  }
}

export type Decision = 'approve' | 'reject';

export interface DecisionResult {
  request: ApprovalRequest;
  decision: Decision;
  decidedAt: string;
  /** False when the workflow no longer waits (it expired or was stopped): nothing will execute. */
  delivered: boolean;
  deliveryError?: string;
}

const pendingPastExpiry = (request: ApprovalRequest, now: number) => now >= request.expiresAt * 1000;

/**
 * Loads a request for one approver, checking what a signed link cannot vouch
 * for: that the request exists, is not past its expiry, and that this person
 * is allowed to decide it. Reads only.
 */
export async function openApproval(
  s: Services,
  input: { approvalId: string; approver: string; linkExpiresAt: number; now?: number },
): Promise<ApprovalRequest> {
  const now = input.now ?? Date.now();
  const approver = approverOf(s, input.approver);
  const request = await s.approvals.get(input.approvalId);
  if (!request) throw new ApprovalRefusedError('not_found', 404, 'there is no approval request with this id');
  if (now >= input.linkExpiresAt * 1000) {
    // A request left pending past its expiry is marked EXPIRED by whoever notices first.
    if (request.status === 'PENDING' && pendingPastExpiry(request, now)) await expireApproval(s, request);
    throw new ApprovalRefusedError('expired', 410, 'this approval link has expired');
  }
  const plus = s.config.approvals.plus_addressing;
  if (approver === canonicalPrincipal(request.requester, plus)) {
    throw new ApprovalRefusedError('self_approval', 403, 'the requester of an action cannot approve it');
  }
  if (!request.allowedApprovers.some((a) => canonicalPrincipal(a, plus) === approver)) {
    throw new ApprovalRefusedError('not_an_approver', 403, `${approver} is not an approver of tenant ${request.tenant}`);
  }
  if (request.status === 'PENDING' && pendingPastExpiry(request, now)) {
    const expired = (await expireApproval(s, request)) ?? request;
    throw new ApprovalRefusedError('expired', 410, 'this approval request has expired; nothing was executed', expired);
  }
  return request;
}

/** The approver in canonical form; a link or sign-in whose address cannot be parsed is nobody's. */
function approverOf(s: Services, raw: string): string {
  try {
    return canonicalPrincipal(raw, s.config.approvals.plus_addressing);
  } catch {
    throw new ApprovalRefusedError('not_an_approver', 403, 'the approver is not a valid email address');
  }
}

/**
 * Marks a request that passed its expiry undecided as EXPIRED (one time, from
 * PENDING) and says so in the trail. Returns the updated request, or undefined
 * when it was no longer pending.
 */
export async function expireApproval(s: Services, request: ApprovalRequest): Promise<ApprovalRequest | undefined> {
  const expired = await s.approvals.decide(request.approvalId, 'EXPIRED', 'paperclip');
  if (expired) {
    await s.audit.append(request.key, {
      type: 'approval_expired',
      actor: 'paperclip',
      data: { approvalId: request.approvalId, expiresAt: request.expiresAtIso },
    });
  }
  return expired;
}

/** Marks every still-pending approval request of an item EXPIRED (the workflow stopped waiting). */
export async function expireApprovalsOf(s: Services, key: string): Promise<void> {
  for (const request of await approvalRequestsOf(s, key)) {
    if (request.status === 'PENDING') await expireApproval(s, request);
  }
}

/**
 * Records one decision. One-time: only the first decision on a pending request
 * takes effect (a conditional update); every other attempt is refused and
 * changes nothing. An approval is written to the audit trail before the
 * workflow is told, so the trail never shows a write without its approval.
 */
export async function decideApproval(
  s: Services,
  input: {
    approvalId: string;
    approver: string;
    linkExpiresAt: number;
    decision: Decision;
    note?: string;
    now?: number;
    /** The approver's sign-in, when policy required one (kept on the record and in the audit event, ID token included). */
    signedIn?: DecisionSignIn;
  },
): Promise<DecisionResult> {
  const request = await openApproval(s, input);
  const approver = approverOf(s, input.approver);
  if (request.status !== 'PENDING') throw alreadyDecided(request);
  const store = s.approvals;
  const decided = await store.decide(
    request.approvalId,
    input.decision === 'approve' ? 'APPROVED' : 'REJECTED',
    approver,
    input.note,
    input.signedIn,
  );
  if (!decided) throw alreadyDecided((await store.get(request.approvalId)) ?? request);
  const decidedAt = decided.decidedAt!;
  const eventData = {
    approvalId: request.approvalId,
    approver,
    decidedAt,
    requester: request.requester,
    action: request.action,
    billNo: request.billNo,
    amount: request.amount ?? null,
    note: input.note ?? null,
    executionArn: request.executionArn,
    signIn: input.signedIn ?? null,
  };
  await s.audit.append(request.key, { type: input.decision === 'approve' ? 'approved' : 'rejected', actor: approver, data: eventData });
  try {
    if (input.decision === 'approve') {
      const output: ApprovalOutput = { approvalId: request.approvalId, approver, decidedAt };
      await s.executions.succeedTask(request.taskToken, output);
    } else {
      const cause = `rejected by ${approver}${input.note ? `: ${oneLine(input.note, 200)}` : ''}`;
      await s.executions.failTask(request.taskToken, TASK_FAILURES.approvalRejected, cause);
    }
  } catch (error) {
    // The decision stands in the table and the trail, but the workflow no longer
    // waits for it (it timed out or was stopped): the trail must say so.
    const deliveryError = `${(error as Error).name}: ${(error as Error).message}`;
    await s.audit.append(request.key, {
      type: 'approval_not_delivered',
      actor: approver,
      data: { approvalId: request.approvalId, decision: input.decision, error: deliveryError },
    });
    return { request: decided, decision: input.decision, decidedAt, delivered: false, deliveryError };
  }
  return { request: decided, decision: input.decision, decidedAt, delivered: true };
}

function alreadyDecided(request: ApprovalRequest): ApprovalRefusedError {
  const by = request.decidedBy ? ` by ${request.decidedBy} at ${request.decidedAt}` : '';
  return new ApprovalRefusedError('already_decided', 409, `this request was already ${request.status.toLowerCase()}${by}`, request);
}
