import { type Bill, DEFAULT_TENANT_COUNTS, type TenantSpec } from './schemas.js';
import { drawTime, seedRecords, someWhole } from '../kit/seed-data.js';

/**
 * Deterministic demo bills. Numbering is fixed so tests can name bills without
 * a lookup: for each tenant, 0001.. are the pending mismatches, then the
 * pending overcharges, then the already processed ones. The seed only varies
 * amounts and timestamps. Each tenant draws from its own stream (seed x tenant
 * id), so adding a tenant does not change the others.
 */

export const BILL_PERIOD = '202611';
/** Bills of the period were last touched between Nov 1 and Nov 28, 2026 (Beijing). */
const PERIOD_START_MS = Date.parse('2026-11-01T01:00:00+08:00');

export function billNoFor(tenant: string, n: number): string {
  return `${tenant.toUpperCase()}-${BILL_PERIOD}-${n.toString().padStart(4, '0')}`;
}

/** Amounts look like real discrepancies: mostly tens to hundreds of yuan, some thousands. */
function drawAmountCents(random: () => number): number {
  const roll = random();
  const yuan = roll < 0.6 ? 10 + random() * 490 : roll < 0.9 ? 500 + random() * 2500 : 3000 + random() * 47000;
  // Roughly a third of vendor amounts are whole yuan.
  return someWhole(random, Math.round(yuan * 100), 0.33);
}

export function generateBills(seed: number, tenants: readonly TenantSpec[]): Bill[] {
  return seedRecords<TenantSpec, [Bill['kind'], Bill['status']], Bill>(seed, tenants, {
    salt: 0,
    groups: (spec) => [
      [spec.pending ?? DEFAULT_TENANT_COUNTS.pending, ['mismatch', 'PENDING']],
      [spec.overcharge ?? DEFAULT_TENANT_COUNTS.overcharge, ['overcharge', 'PENDING']],
      [spec.processed ?? DEFAULT_TENANT_COUNTS.processed, ['mismatch', 'PROCESSED']],
    ],
    make: ({ spec, n, random }, [kind, status]) => {
      const amountCents = drawAmountCents(random);
      const created = drawTime(random, PERIOD_START_MS);
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
    },
  });
}
