import { drawOne, drawTime, seedRecords, someWhole } from '../kit/seed-data.js';
import { capitalise } from './accounts.js';
import { DEFAULT_ORG_COUNTS, type Discrepancy, type DiscrepancyState, type DiscrepancyType, type OrgSpec } from './schemas.js';

/**
 * Deterministic discrepancies. The org at position i numbers its records from
 * N-(7001 + 1000 i): first the open billing errors, then the open duplicate
 * charges, then the resolved and the refunded ones. The seed varies customers,
 * amounts and times only.
 */

const CUSTOMERS: [string, ...string[]] = [
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

export function discrepancyIdFor(orgIndex: number, n: number): string {
  return `N-${7000 + 1000 * orgIndex + n}`;
}

export function orgName(spec: OrgSpec): string {
  return spec.name ?? `${capitalise(spec.id)} Corp`;
}

function drawAmountCents(random: () => number): number {
  const roll = random();
  const dollars = roll < 0.7 ? 5 + random() * 395 : 400 + random() * 4600;
  return someWhole(random, Math.round(dollars * 100), 0.3);
}

export function generateDiscrepancies(seed: number, orgs: readonly OrgSpec[]): Discrepancy[] {
  return seedRecords<OrgSpec, [DiscrepancyType, DiscrepancyState], Discrepancy>(seed, orgs, {
    salt: 0x5eed,
    groups: (spec) => [
      [spec.billingErrors ?? DEFAULT_ORG_COUNTS.billingErrors, ['billing_error', 'open']],
      [spec.duplicateCharges ?? DEFAULT_ORG_COUNTS.duplicateCharges, ['duplicate_charge', 'open']],
      [spec.resolved ?? DEFAULT_ORG_COUNTS.resolved, ['billing_error', 'resolved']],
      [spec.refunded ?? DEFAULT_ORG_COUNTS.refunded, ['duplicate_charge', 'refunded']],
    ],
    make: ({ spec, index, n, random }, [type, state]) => {
      const at = drawTime(random, PERIOD_START_MS);
      const customer = drawOne(random, CUSTOMERS);
      const record: Discrepancy = {
        id: discrepancyIdFor(index, n),
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
    },
  });
}
