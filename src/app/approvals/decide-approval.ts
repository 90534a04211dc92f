import { SendTaskFailureCommand, SendTaskSuccessCommand } from '@aws-sdk/client-sfn';
import type { Services } from '../services.js';
import type { ApprovalRequest } from '../../adapters/dynamodb/approvals-store.js';
import { approvalsStore } from './request-approval.js';

/**
 * The approval decision, independent of HTTP: who may see a request, who may
 * decide it, and the order in which a decision becomes effective (table, then
 * audit trail, then the waiting workflow).
 */

export type RefusalCode = 'not_found' | 'expired' | 'self_approval' | 'not_an_approver' | 'already_decided';

/** A request the approval flow refuses; nothing was changed. `status` is the HTTP status it maps to. */
export class ApprovalRefusedError extends Error {
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

/** The output RequestApproval's waiting task receives on approval; the workflow puts it in $.approval. */
export interface ApprovalOutput {
  approvalId: string;
  approver: string;
  decidedAt: string;
}

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
  const approver = input.approver.toLowerCase();
  if (now >= input.linkExpiresAt * 1000) {
    throw new ApprovalRefusedError('expired', 410, 'this approval link has expired');
  }
  const request = await approvalsStore(s).get(input.approvalId);
  if (!request) throw new ApprovalRefusedError('not_found', 404, 'there is no approval request with this id');
  if (approver === request.requester.toLowerCase()) {
    throw new ApprovalRefusedError('self_approval', 403, 'the requester of an action cannot approve it');
  }
  if (!request.allowedApprovers.includes(approver)) {
    throw new ApprovalRefusedError('not_an_approver', 403, `${approver} is not an approver of tenant ${request.tenant}`);
  }
  if (request.status === 'PENDING' && pendingPastExpiry(request, now)) {
    throw new ApprovalRefusedError('expired', 410, 'this approval request has expired; nothing was executed', request);
  }
  return request;
}

/**
 * Records one decision. One-time: only the first decision on a pending request
 * takes effect (a conditional update); every other attempt is refused and
 * changes nothing. An approval is written to the audit trail before the
 * workflow is told, so the trail never shows a write without its approval.
 */
export async function decideApproval(
  s: Services,
  input: { approvalId: string; approver: string; linkExpiresAt: number; decision: Decision; note?: string; now?: number },
): Promise<DecisionResult> {
  const request = await openApproval(s, input);
  const approver = input.approver.toLowerCase();
  if (request.status !== 'PENDING') throw alreadyDecided(request);
  const store = approvalsStore(s);
  const decided = await store.decide(request.approvalId, input.decision === 'approve' ? 'APPROVED' : 'REJECTED', approver, input.note);
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
  };
  await s.audit.append(request.key, { type: input.decision === 'approve' ? 'approved' : 'rejected', actor: approver, data: eventData });
  try {
    if (input.decision === 'approve') {
      const output: ApprovalOutput = { approvalId: request.approvalId, approver, decidedAt };
      await s.sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: JSON.stringify(output) }));
    } else {
      const cause = `rejected by ${approver}${input.note ? `: ${input.note}` : ''}`;
      await s.sfn.send(new SendTaskFailureCommand({ taskToken: request.taskToken, error: 'ApprovalRejected', cause }));
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
