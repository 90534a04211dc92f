import type { Services } from '../services.js';
import type { ApprovalRequest } from '../ports/approvals.js';
import type { RoutedItem } from '../../domain/routing.js';
import { verifyChain } from '../../domain/audit-chain.js';
import { hasType, isEvent } from '../../domain/audit-events.js';
import { actionPayloadHash } from '../../domain/approval-proof.js';
import { ApprovalNotProvenError } from '../../domain/errors.js';
import { approvalRequestsOf } from './request-approval.js';
import { canonicalPrincipal } from '../../domain/principal.js';
import { signInRequired, type DecisionSignIn } from '../../domain/sign-in-policy.js';
import { SIGN_IN_SKEW_SECONDS, signInClaimsProblem, type IdTokenClaims } from '../../domain/sign-in-proof.js';

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
  const requests = await approvalRequestsOf(s, item.key);
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
    return refuse(
      `policy requires a signed-in approver for ${item.action}, and the approval record holds no sign-in with the provider's ID token`,
    );
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
    (e) => isEvent(e, 'approved') && e.data.approvalId === request.approvalId && canonical(e.actor) === approver,
  );
  const approvedEvent = events[recorded];
  if (!isEvent(approvedEvent, 'approved')) return refuse('the audit chain has no approved event for this approval');
  if (needsSignIn && !sameSignIn(approvedEvent.data.signIn, request.signIn!)) {
    return refuse('the approved event in the audit chain does not carry the sign-in the approval record names');
  }
  if (needsSignIn) {
    const signedIn = await signInProblem(s, request, approver, canonical);
    if (signedIn) return refuse(`the decision's sign-in is not proven by the identity provider: ${signedIn}`);
  }
  const firstWrite = events.findIndex((e) => hasType(e, 'write_started'));
  if (firstWrite >= 0 && firstWrite < recorded) return refuse('a write started before the approval was recorded');
  return { approvalId: request.approvalId, approver, decidedAt: request.decidedAt };
}

/**
 * Whether the ID token the decision stored proves that the named approver
 * signed in for this approval when it was decided: signed with one of the
 * deployment's issuer's published keys (the issuer comes from the deployment,
 * never from the record), for our client, naming this approval in its nonce,
 * the recorded subject and the approver's verified email, issued within the
 * request's window and valid at the decision. A record or event anyone with
 * table access can write proves none of that; only the provider's key does.
 */
async function signInProblem(
  s: Services,
  request: ApprovalRequest,
  approver: string,
  canonical: (raw: string | undefined) => string | undefined,
): Promise<string | undefined> {
  const signIn = request.signIn!;
  const policy = s.config.approvals.sign_in;
  let issuer: string | undefined;
  try {
    issuer = s.signInIssuer();
  } catch (error) {
    return (error as Error).message;
  }
  if (!policy || !issuer) return 'no identity provider is configured here to check it against';
  if (signIn.issuer !== issuer) return `the record names the issuer ${signIn.issuer}, not this deployment's ${issuer}`;
  const decidedAt = Date.parse(request.decidedAt!);
  let claims: IdTokenClaims;
  try {
    claims = await s.idTokens.verify(signIn.idToken, {
      issuer,
      audience: policy.client_id,
      at: new Date(decidedAt),
      toleranceSeconds: SIGN_IN_SKEW_SECONDS,
    });
  } catch (error) {
    return (error as Error).message;
  }
  return signInClaimsProblem(claims, {
    issuer,
    clientId: policy.client_id,
    approvalId: request.approvalId,
    approver,
    subject: signIn.subject,
    requestedAt: Date.parse(request.createdAt),
    expiresAt: request.expiresAt * 1000,
    decidedAt,
    canonical,
  });
}

function isSignIn(value: unknown): value is DecisionSignIn {
  const v = value as Partial<DecisionSignIn> | null | undefined;
  return (
    typeof v?.issuer === 'string' &&
    v.issuer.length > 0 &&
    typeof v.subject === 'string' &&
    v.subject.length > 0 &&
    typeof v.idToken === 'string' &&
    v.idToken.length > 0
  );
}

function sameSignIn(recorded: unknown, stored: DecisionSignIn): boolean {
  return (
    isSignIn(recorded) && recorded.issuer === stored.issuer && recorded.subject === stored.subject && recorded.idToken === stored.idToken
  );
}
