/**
 * What an approver's ID token must say for a decision to count as signed in,
 * beyond the provider's signature (checked by the adapter against the
 * issuer's published keys): the named approver, this one approval, and a
 * sign-in that was valid when the decision was made, within the request's
 * window. A copied token of another decision, another person or another time
 * proves nothing here. Pure rules: the write path and the approval pages ask
 * the same questions.
 */

/** Clocks of the provider, the pages and the write differ a little; more than this is not skew. */
export const SIGN_IN_SKEW_SECONDS = 60;

/** The nonce a sign-in for one approval request carries: `<approvalId>.<random>`. */
export function signInNonce(approvalId: string, random: string): string {
  return `${approvalId}.${random}`;
}

/** The approval request a sign-in nonce was made for, if it is one of ours. */
export function approvalOfNonce(nonce: unknown): string | undefined {
  if (typeof nonce !== 'string') return undefined;
  const match = /^([A-Za-z0-9_-]{16,80})\.[A-Za-z0-9_-]{16,}$/.exec(nonce);
  return match?.[1];
}

/** The ID token claims these rules read (after the signature, issuer and audience were verified). */
export interface IdTokenClaims {
  iss?: unknown;
  sub?: unknown;
  aud?: unknown;
  iat?: unknown;
  exp?: unknown;
  auth_time?: unknown;
  nonce?: unknown;
  email?: unknown;
  email_verified?: unknown;
}

export interface SignInExpectation {
  issuer: string;
  clientId: string;
  approvalId: string;
  /** The approver named by the decision, canonical. */
  approver: string;
  /** The subject the decision recorded. */
  subject: string;
  /** Epoch milliseconds. */
  requestedAt: number;
  expiresAt: number;
  decidedAt: number;
  /** Canonical form of an email address; throws or returns undefined for anything else. */
  canonical: (email: string) => string | undefined;
}

const seconds = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/**
 * Why these verified claims do not prove that the named approver signed in
 * for this approval at the time of the decision, or undefined when they do.
 */
export function signInClaimsProblem(claims: IdTokenClaims, expect: SignInExpectation): string | undefined {
  if (claims.iss !== expect.issuer) return `the ID token was issued by ${String(claims.iss)}, not ${expect.issuer}`;
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(expect.clientId)) return `the ID token is not for the client ${expect.clientId}`;
  if (claims.sub !== expect.subject) return 'the ID token names another subject than the decision records';
  if (typeof claims.email !== 'string' || claims.email_verified !== true) return 'the ID token vouches for no verified email';
  if (expect.canonical(claims.email) !== expect.approver) return `the ID token signs in someone other than ${expect.approver}`;
  if (approvalOfNonce(claims.nonce) !== expect.approvalId) return 'the ID token was issued for a sign-in to another approval';
  const iat = seconds(claims.iat);
  const exp = seconds(claims.exp);
  if (iat === undefined || exp === undefined) return 'the ID token has no issue or expiry time';
  const skew = SIGN_IN_SKEW_SECONDS;
  const decided = expect.decidedAt / 1000;
  if (iat < expect.requestedAt / 1000 - skew) return 'the ID token was issued before the approval was requested';
  if (iat > decided + skew) return 'the ID token was issued after the decision';
  if (exp < decided - skew) return 'the ID token had expired when the decision was made';
  if (decided > expect.expiresAt / 1000) return 'the decision was made after the approval expired';
  const authTime = seconds(claims.auth_time);
  if (authTime !== undefined && authTime > decided + skew) return 'the sign-in happened after the decision';
  return undefined;
}
