import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * CSRF protection for the decision form. The page sets a random nonce in an
 * HttpOnly, SameSite=Strict cookie and puts an HMAC over (approval id,
 * approver, nonce) in the form. A POST needs both, so a page on another site
 * can neither forge the token (no key) nor send the cookie (SameSite), and a
 * token lifted from one approval or approver is useless for another.
 */

export const CSRF_COOKIE = 'pc_csrf';

export function newCsrfNonce(): string {
  return randomBytes(18).toString('base64url');
}

export function csrfToken(secret: string, binding: { approvalId: string; approver: string; nonce: string }): string {
  // Domain-separated from link signatures, which use the same key.
  return createHmac('sha256', secret)
    .update(`csrf\n${binding.approvalId}\n${binding.approver.toLowerCase()}\n${binding.nonce}`)
    .digest('base64url');
}

export function verifyCsrfToken(secret: string, binding: { approvalId: string; approver: string; nonce: string }, token: string): boolean {
  const expected = Buffer.from(csrfToken(secret, binding));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function csrfCookie(nonce: string, options: { approvalId: string; secure: boolean; maxAgeSeconds: number }): string {
  const parts = [
    `${CSRF_COOKIE}=${nonce}`,
    `Path=/approvals/${options.approvalId}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
