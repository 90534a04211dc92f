import { createHash } from 'node:crypto';

/**
 * Audit events are hash-chained per chain (one chain per idempotency key):
 * each event's hash covers its content and the previous event's hash, so an
 * edited, removed or inserted event breaks every hash after it.
 */
/**
 * An event's content as the chain stores and hashes it, whatever its type. What may be appended is narrower
 * (`AuditEventInput` in audit-events.ts, checked by the audit log); what is stored is verified as it is, so a
 * chain of any age verifies.
 */
export interface AuditEventBody {
  type: string;
  actor: string;
  data: Record<string, unknown>;
}

export interface AuditEvent extends AuditEventBody {
  chain: string;
  seq: number;
  at: string;
  prevHash: string;
  hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/**
 * Canonical JSON as RFC 8785 (JSON Canonicalization Scheme, JCS) defines it: no whitespace, properties sorted by
 * their UTF-16 code units, numbers and strings serialized as ECMAScript's JSON.stringify does. An auditor can
 * recompute every hash with any JCS implementation (test/domain/audit-chain.test.ts runs the standard's examples).
 * Properties whose value is undefined are left out, as JSON.stringify leaves them out; NaN and Infinity, which JSON
 * cannot express, are refused.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`canonical JSON: ${value} is not a finite number`);
  return JSON.stringify(value ?? null);
}

export function hashEvent(event: Omit<AuditEvent, 'hash'>): string {
  return createHash('sha256').update(canonicalJson(event)).digest('hex');
}

export function sealEvent(chain: string, seq: number, prevHash: string, input: AuditEventBody, at = new Date().toISOString()): AuditEvent {
  const body = { chain, seq, at, prevHash, type: input.type, actor: input.actor, data: input.data };
  return { ...body, hash: hashEvent(body) };
}

/** Returns the first problem in a chain, or undefined if it verifies. */
export function verifyChain(events: readonly AuditEvent[]): { seq: number; problem: string } | undefined {
  let prev = GENESIS_HASH;
  for (const [index, event] of events.entries()) {
    if (event.seq !== index + 1)
      return { seq: event.seq, problem: `expected event ${index + 1}, found ${event.seq} (an event was removed or inserted)` };
    if (event.prevHash !== prev) return { seq: event.seq, problem: 'prevHash does not match the previous event' };
    const { hash, ...body } = event;
    if (hashEvent(body) !== hash) return { seq: event.seq, problem: 'content does not match its hash (the event was altered)' };
    prev = hash;
  }
  return undefined;
}
