import { seededRandom } from '../../src/lib/seeded-random.js';
import { capitalise } from './accounts.js';
import type { Discrepancy, DiscrepancyState, DiscrepancyType, OrgSpec } from './schemas.js';

/**
 * Deterministic discrepancies. The org at position i numbers its records from
 * N-(7001 + 1000 i): first the open billing errors, then the open duplicate
 * charges, then the resolved and the refunded ones. The seed varies customers,
 * amounts and times only.
 */

export const DEFAULT_ORG_COUNTS = { billingErrors: 6, duplicateCharges: 2, resolved: 2, refunded: 1 } as const;

const CUSTOMERS = [
  'Initrode LLC',
  'Umbrella Retail',
  'Vandelay Imports',
  'Soylent Foods',
  'Hooli Cloud',
  'Stark Logistics',
  'Wayne Analytics',
  'Tyrell Devices',
  'Cyberdyne Labs',
  'Massive Dynamic',
  'Wonka Sweets',
  'Gringotts Travel',
];

const PERIOD_START_MS = Date.parse('2026-11-01T09:00:00Z');
const PERIOD_SPAN_MS = 27 * 24 * 3600_000;

export function discrepancyIdFor(orgIndex: number, n: number): string {
  return `N-${7000 + 1000 * orgIndex + n}`;
}

export function orgName(spec: OrgSpec): string {
  return spec.name ?? `${capitalise(spec.id)} Corp`;
}

function hashString(text: string, seed: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

function drawAmountCents(random: () => number): number {
  const roll = random();
  const dollars = roll < 0.7 ? 5 + random() * 395 : 400 + random() * 4600;
  const cents = Math.round(dollars * 100);
  return random() < 0.3 ? Math.round(cents / 100) * 100 : cents;
}

export function generateDiscrepancies(seed: number, orgs: readonly OrgSpec[]): Discrepancy[] {
  const out: Discrepancy[] = [];
  orgs.forEach((spec, orgIndex) => {
    const random = seededRandom(hashString(spec.id, seed ^ 0x5eed));
    let n = 0;
    const make = (type: DiscrepancyType, state: DiscrepancyState): Discrepancy => {
      n += 1;
      const at = PERIOD_START_MS + Math.floor((random() * PERIOD_SPAN_MS) / 1000) * 1000;
      const customer = CUSTOMERS[Math.floor(random() * CUSTOMERS.length)] ?? 'Initrode LLC';
      const record: Discrepancy = {
        id: discrepancyIdFor(orgIndex, n),
        org: spec.id,
        customer,
        invoice: `INV-${2600 + Math.floor(random() * 400)}-${(1000 + n).toString()}`,
        type,
        amountCents: drawAmountCents(random),
        state,
        resolutionReason: null,
        updatedAt: new Date(at).toISOString(),
        history: [],
      };
      if (state === 'resolved') {
        record.resolutionReason = 'Credit note issued by finance';
        record.history.push({ at: record.updatedAt, action: 'resolve', actor: 'ops@ledgerly.test' });
      }
      if (state === 'refunded') record.history.push({ at: record.updatedAt, action: 'refund', actor: 'ops@ledgerly.test' });
      return record;
    };
    for (let i = 0; i < (spec.billingErrors ?? DEFAULT_ORG_COUNTS.billingErrors); i++) out.push(make('billing_error', 'open'));
    for (let i = 0; i < (spec.duplicateCharges ?? DEFAULT_ORG_COUNTS.duplicateCharges); i++) out.push(make('duplicate_charge', 'open'));
    for (let i = 0; i < (spec.resolved ?? DEFAULT_ORG_COUNTS.resolved); i++) out.push(make('billing_error', 'resolved'));
    for (let i = 0; i < (spec.refunded ?? DEFAULT_ORG_COUNTS.refunded); i++) out.push(make('duplicate_charge', 'refunded'));
  });
  return out;
}
