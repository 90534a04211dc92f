import type { Services } from '../services.js';
import type { ApprovalRequest } from '../../adapters/dynamodb/approvals-store.js';
import type { RoutedItem } from '../../domain/routing.js';
import { verifyChain } from '../../domain/audit-chain.js';
import { actionPayloadHash } from '../../domain/approval-proof.js';
import { ApprovalNotProvenError } from '../../domain/errors.js';
import { canonicalPrincipal } from '../../domain/principal.js';
import { signInRequired, type DecisionSignIn } from '../../domain/sign-in-policy.js';

/** The approval a write executed under, as the write itself established it. */
export interface ProvenApproval {
  approvalId: string;
  approver: string;
  decidedAt: string;
}

/**
 * Establishes, from the approvals table and the audit chain and nothing the
 * workflow passed in, that this exact write was approved: a request for this
 * idempotency key, APPROVED, bound to the hash of the exact action payload,
 * decided before it expired by an approver who is allowed for the tenant now
 * and is not the requester, signed in when policy requires sign-in for the
 * action or amount, and recorded as `approved` (with that sign-in) in an
 * intact audit chain before any write started. Anyone who can answer the workflow's
 * task token (a SendTaskSuccess with an invented output) gets no further
 * than this check. Throws ApprovalNotProvenError naming the first gap.
 */
export async function proveApproval(s: Services, item: RoutedItem, claimed: unknown, now = Date.now()): Promise<ProvenApproval> {
  const proven = await establish(s, item, now);
  if (typeof proven !== 'string') return proven;
  // What the workflow handed over is kept as data: it is what a forger would have written.
  await s.audit.append(item.key, {
    type: 'approval_not_proven',
    actor: item.identity,
    data: { reason: proven, claimedByWorkflow: claimed ?? null },
  });
  throw new ApprovalNotProvenError(`no provable approval for ${item.key}: ${proven}; nothing was written`, { key: item.key });
}

/** The proven approval, or why there is none. */
async function establish(s: Services, item: RoutedItem, now: number): Promise<ProvenApproval | string> {
  const refuse = (why: string) => why;
  const requests = await s.approvals.byKey(item.key);
  const approved = requests.filter((r) => r.status === 'APPROVED');
  if (approved.length === 0) {
    const seen = requests.map((r) => r.status).join(', ') || 'none';
    return refuse(`the approvals table holds no APPROVED request for this key (requests: ${seen})`);
  }
  if (approved.length > 1) return refuse(`${approved.length} approved requests for one key`);
  const request = (await s.approvals.get(approved[0]!.approvalId)) as ApprovalRequest;
  if (request.key !== item.key) return refuse('the approval is bound to another idempotency key');
  if (request.payloadHash !== actionPayloadHash(item)) {
    return refuse('the approved action (tenant, bill, action or parameters) differs from the one about to be written');
  }
  const plus = s.config.approvals.plus_addressing;
  const canonical = (raw: string | undefined) => {
    try {
      return raw ? canonicalPrincipal(raw, plus) : undefined;
    } catch {
      return undefined;
    }
  };
  const approver = canonical(request.decidedBy);
  if (!approver || !request.decidedAt) return refuse('the approval names no approver or decision time');
  if (approver === canonical(request.requester) || approver === canonical(item.requestedBy)) {
    return refuse(`${approver} requested the action and cannot approve it`);
  }
  const tenant = s.config.tenants.find((t) => t.id === item.tenant);
  const allowedNow = (tenant?.approvers ?? []).map(canonical);
  if (!request.allowedApprovers.map(canonical).includes(approver) || !allowedNow.includes(approver)) {
    return refuse(`${approver} is not an approver of tenant ${item.tenant}`);
  }
  // Policy is read now, from the config, not from the request: a record written without the pages' check still needs it.
  const needsSignIn = signInRequired(s.config.approvals.sign_in, { action: item.action, amount: item.params['amount'] ?? request.amount });
  if (needsSignIn && !isSignIn(request.signIn)) {
    return refuse(`policy requires a signed-in approver for ${item.action}, and the approval record holds no sign-in`);
  }
  const decidedAt = Date.parse(request.decidedAt);
  if (!(decidedAt < request.expiresAt * 1000)) return refuse('the approval was decided after it expired');
  if (now >= request.expiresAt * 1000 + s.config.write_policy.claim_lease_seconds * 1000) {
    return refuse('the approval expired before the write');
  }
  const events = await s.audit.events(item.key);
  const broken = verifyChain(events);
  if (broken) return refuse(`the audit chain is broken at event ${broken.seq} (${broken.problem})`);
  const recorded = events.findIndex(
    (e) => e.type === 'approved' && e.data['approvalId'] === request.approvalId && canonical(e.actor) === approver,
  );
  if (recorded < 0) return refuse('the audit chain has no approved event for this approval');
  if (needsSignIn && !sameSignIn(events[recorded]!.data['signIn'], request.signIn!)) {
    return refuse('the approved event in the audit chain does not carry the sign-in the approval record names');
  }
  const firstWrite = events.findIndex((e) => e.type === 'write_started');
  if (firstWrite >= 0 && firstWrite < recorded) return refuse('a write started before the approval was recorded');
  return { approvalId: request.approvalId, approver, decidedAt: request.decidedAt };
}

function isSignIn(value: unknown): value is DecisionSignIn {
  const v = value as Partial<DecisionSignIn> | null | undefined;
  return typeof v?.issuer === 'string' && v.issuer.length > 0 && typeof v.subject === 'string' && v.subject.length > 0;
}

function sameSignIn(recorded: unknown, stored: DecisionSignIn): boolean {
  return isSignIn(recorded) && recorded.issuer === stored.issuer && recorded.subject === stored.subject;
}
