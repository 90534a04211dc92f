import type { AuditEvent } from '../domain/audit-chain.js';

/**
 * Where seal anchors and daily digests live in the evidence bucket. Two
 * prefixes, so the sealing functions (which put anchors) hold no grant on
 * digests and the digest function (which puts digests) none on anchors.
 */
export const ANCHOR_PREFIX = 'anchors/';
export const DIGEST_PREFIX = 'digests/';

export const DAY_MS = 24 * 3600 * 1000;
export const dayOf = (iso: string) => iso.slice(0, 10);
export const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
export const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
/** The instant a day ends (UTC midnight after it). */
export const dayEnd = (day: string) => Date.parse(`${day}T00:00:00Z`) + DAY_MS;

export function anchorKey(tenant: string, event: Pick<AuditEvent, 'chain' | 'seq' | 'at'>): string {
  return `${ANCHOR_PREFIX}${tenant}/${dayOf(event.at)}/${event.chain}/${event.seq}.json`;
}

export function digestKey(tenant: string, day: string): string {
  return `${DIGEST_PREFIX}${tenant}/${day}.json`;
}
