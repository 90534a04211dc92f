import type { Bill, TenantSpec } from './schemas.js';
import { seededRandom } from '../../src/lib/seeded-random.js';

/**
 * Deterministic demo bills. Numbering is fixed so tests can name bills without
 * a lookup: for each tenant, 0001.. are the pending mismatches, then the
 * pending overcharges, then the already processed ones. The seed only varies
 * amounts and timestamps. Each tenant draws from its own stream (seed x tenant
 * id), so adding a tenant does not change the others.
 */

export const BILL_PERIOD = '202611';
export const DEFAULT_TENANT_COUNTS = { pending: 12, overcharge: 1, processed: 3 } as const;

/** Bills of the period were last touched between Nov 1 and Nov 28, 2026 (Beijing). */
const PERIOD_START_MS = Date.parse('2026-11-01T01:00:00+08:00');
const PERIOD_SPAN_MS = 27 * 24 * 3600_000;

function hashString(text: string, seed: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

export function billNoFor(tenant: string, n: number): string {
  return `${tenant.toUpperCase()}-${BILL_PERIOD}-${n.toString().padStart(4, '0')}`;
}

/** Amounts look like real discrepancies: mostly tens to hundreds of yuan, some thousands. */
function drawAmountCents(random: () => number): number {
  const roll = random();
  const yuan = roll < 0.6 ? 10 + random() * 490 : roll < 0.9 ? 500 + random() * 2500 : 3000 + random() * 47000;
  const cents = Math.round(yuan * 100);
  // Roughly a third of vendor amounts are whole yuan.
  return random() < 0.33 ? Math.round(cents / 100) * 100 : cents;
}

function drawTime(random: () => number): number {
  return PERIOD_START_MS + Math.floor((random() * PERIOD_SPAN_MS) / 1000) * 1000;
}

export function generateBills(seed: number, tenants: readonly TenantSpec[]): Bill[] {
  const bills: Bill[] = [];
  for (const spec of tenants) {
    const random = seededRandom(hashString(spec.id, seed));
    const pending = spec.pending ?? DEFAULT_TENANT_COUNTS.pending;
    const overcharge = spec.overcharge ?? DEFAULT_TENANT_COUNTS.overcharge;
    const processed = spec.processed ?? DEFAULT_TENANT_COUNTS.processed;
    let n = 0;
    const make = (kind: Bill['kind'], status: Bill['status']): Bill => {
      n += 1;
      const amountCents = drawAmountCents(random);
      const created = drawTime(random);
      const bill: Bill = {
        billNo: billNoFor(spec.id, n),
        tenant: spec.id,
        kind,
        amountCents,
        status,
        updatedAt: new Date(created).toISOString(),
        notes: [],
        records: [],
      };
      if (status === 'PROCESSED') {
        // Handled earlier by hand, through the shared ops account, as the story goes.
        const handled = created + Math.floor(random() * 48 * 3600) * 1000;
        bill.updatedAt = new Date(handled).toISOString();
        bill.records.push({ at: bill.updatedAt, action: 'mark', identity: 'ops-shared', via: 'ui' });
      }
      return bill;
    };
    for (let i = 0; i < pending; i++) bills.push(make('mismatch', 'PENDING'));
    for (let i = 0; i < overcharge; i++) bills.push(make('overcharge', 'PENDING'));
    for (let i = 0; i < processed; i++) bills.push(make('mismatch', 'PROCESSED'));
  }
  return bills;
}
