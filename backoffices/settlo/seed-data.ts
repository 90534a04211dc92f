import { drawOne, drawTime, seedRecords } from '../kit/seed-data.js';
import { type Bill, type BillKind, type BillStatus, DEFAULT_TENANT_COUNTS, type TenantSpec } from './schemas.js';

/**
 * Deterministic settlement bills. The tenant at position i numbers its bills JS-(i+1)0001...: first the
 * pending mismatches, then the pending overcharges, then the processed ones. The seed varies counterparties,
 * amounts and times only.
 */

const TENANT_NAMES = ['华东结算中心', '华南结算中心', '华北结算中心', '西南结算中心', '西北结算中心', '东北结算中心', '华中结算中心'];

const COUNTERPARTIES: [string, ...string[]] = [
  '上海嘉禾物流有限公司',
  '杭州云帆科技有限公司',
  '苏州恒通电子有限公司',
  '南京鼎盛贸易有限公司',
  '宁波海港仓储有限公司',
  '广州南粤食品有限公司',
  '深圳星河数码有限公司',
  '厦门鹭岛航运有限公司',
];

const PERIOD_START_MS = Date.parse('2026-11-01T01:00:00Z');

export function billNoFor(tenantIndex: number, n: number): string {
  return `JS-${tenantIndex + 1}${n.toString().padStart(4, '0')}`;
}

export function tenantName(spec: TenantSpec, index: number): string {
  return spec.name ?? TENANT_NAMES[index] ?? `${spec.id} 结算中心`;
}

export function generateBills(seed: number, tenants: readonly TenantSpec[]): Bill[] {
  return seedRecords<TenantSpec, [BillKind, BillStatus], Bill>(seed, tenants, {
    salt: 0x5e771,
    groups: (spec) => [
      [spec.pending ?? DEFAULT_TENANT_COUNTS.pending, ['mismatch', 'PENDING']],
      [spec.overcharge ?? DEFAULT_TENANT_COUNTS.overcharge, ['overcharge', 'PENDING']],
      [spec.processed ?? DEFAULT_TENANT_COUNTS.processed, ['mismatch', 'PROCESSED']],
    ],
    make: ({ spec, index, n, random }, [kind, status]) => {
      const at = drawTime(random, PERIOD_START_MS);
      const yuan = random() < 0.75 ? 20 + random() * 4980 : 5000 + random() * 95_000;
      return {
        billNo: billNoFor(index, n),
        tenant: spec.id,
        counterparty: drawOne(random, COUNTERPARTIES),
        kind,
        amountCents: Math.round(yuan * 100),
        status,
        note: status === 'PROCESSED' ? '财务已核对' : null,
        updatedAt: new Date(at).toISOString(),
      };
    },
  });
}
