import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Who asked for a write is what an authenticated entry point says, not what a
 * task body says. The entry point (the batch's ReadList for its items, the
 * CLI, a compensation, a takeover retry, the embedded stack) attests the
 * requester with an HMAC over the requester, what is asked (an idempotency
 * key, or a batch's chain name) and the execution's name; routing recomputes
 * it. Anyone who can start executions but cannot read the key can name no
 * requester, and an attestation cannot be reused for another write or run.
 */
export interface RequesterClaim {
  requestedBy: string;
  /** The idempotency key of a guarded write, or batch:<tenant>:<taskId> for a batch. */
  subject: string;
  executionName: string;
}

const LABEL = 'paperclip requester attestation v1';

export function requesterAttestation(secret: string, claim: RequesterClaim): string {
  // JSON keeps the field boundaries: no value can borrow text from its neighbour.
  const message = JSON.stringify([LABEL, claim.requestedBy, claim.subject, claim.executionName]);
  return createHmac('sha256', secret).update(message).digest('base64url');
}

export function requesterAttested(secret: string, claim: RequesterClaim, attestation: string | undefined): boolean {
  if (!attestation) return false;
  const expected = Buffer.from(requesterAttestation(secret, claim));
  const given = Buffer.from(attestation);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The key derived from another secret under its own label, so it is never valid as that secret's signature. */
export function derivedAttestationKey(secret: string): string {
  return createHmac('sha256', secret).update(LABEL).digest('base64url');
}

/** What opening a compensation says: this write is undone by this inverse, asked for by this requester. */
export interface CompensationStartClaim {
  /** The idempotency key of the write being undone. */
  compensates: string;
  /** The inverse's idempotency key (also its execution's name). */
  inverseKey: string;
  inverseAction: string;
  requestedBy: string;
}

const COMPENSATION_LABEL = 'paperclip compensation start v1';

/**
 * The compensation path's own signature on a `compensation_started` event,
 * with the requester attestation key under its own label: routing admits a
 * task that says `compensates` only when the open event carries it, so an
 * event appended by anyone who can write the audit table but not read the key
 * opens nothing.
 */
export function compensationStartAttestation(secret: string, claim: CompensationStartClaim): string {
  const message = JSON.stringify([COMPENSATION_LABEL, claim.compensates, claim.inverseKey, claim.inverseAction, claim.requestedBy]);
  return createHmac('sha256', secret).update(message).digest('base64url');
}

export function compensationStartAttested(secret: string, claim: CompensationStartClaim, attestation: unknown): boolean {
  if (typeof attestation !== 'string' || attestation.length === 0) return false;
  const expected = Buffer.from(compensationStartAttestation(secret, claim));
  const given = Buffer.from(attestation);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
