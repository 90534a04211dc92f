import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Approval links carry an unguessable approval id and an HMAC bound to the
 * approver and the expiry. The Step Functions task token never leaves the
 * backend: it is looked up by approval id server-side.
 */
export interface ApprovalLinkClaims {
  approvalId: string;
  approver: string;
  expiresAt: number;
}

export function signApprovalLink(claims: ApprovalLinkClaims, secret: string): string {
  return createHmac('sha256', secret)
    .update(`${claims.approvalId}\n${claims.approver.toLowerCase()}\n${claims.expiresAt}`)
    .digest('base64url');
}

export function verifyApprovalLink(claims: ApprovalLinkClaims, signature: string, secret: string): boolean {
  const expected = Buffer.from(signApprovalLink(claims, secret));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function approvalUrl(baseUrl: string, claims: ApprovalLinkClaims, secret: string): string {
  const url = new URL(`/approvals/${encodeURIComponent(claims.approvalId)}`, baseUrl);
  url.searchParams.set('approver', claims.approver);
  url.searchParams.set('exp', String(claims.expiresAt));
  url.searchParams.set('sig', signApprovalLink(claims, secret));
  return url.toString();
}
