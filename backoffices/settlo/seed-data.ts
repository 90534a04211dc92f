import { seededRandom } from '../../src/lib/seeded-random.js';
import type { Bill, BillKind, BillStatus, TenantSpec } from './schemas.js';

/**
 * Deterministic settlement bills. The tenant at position i numbers its bills JS-(i+1)0001...: first the
 * pending mismatches, then the pending overcharges, then the processed ones. The seed varies counterparties,
 * amounts and times only.
 */

export const DEFAULT_TENANT_COUNTS = { pending: 26, overcharge: 1, processed: 3 } as const;

const TENANT_NAMES = ['华东结算中心', '华南结算中心', '华北结算中心', '西南结算中心', '西北结算中心', '东北结算中心', '华中结算中心'];

const COUNTERPARTIES = [
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
const PERIOD_SPAN_MS = 27 * 24 * 3600_000;

export function billNoFor(tenantIndex: number, n: number): string {
  return `JS-${tenantIndex + 1}${n.toString().padStart(4, '0')}`;
}

export function tenantName(spec: TenantSpec, index: number): string {
  return spec.name ?? TENANT_NAMES[index] ?? `${spec.id} 结算中心`;
}

function hashString(text: string, seed: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

export function generateBills(seed: number, tenants: readonly TenantSpec[]): Bill[] {
  const out: Bill[] = [];
  tenants.forEach((spec, index) => {
    const random = seededRandom(hashString(spec.id, seed ^ 0x5e771));
    let n = 0;
    const make = (kind: BillKind, status: BillStatus): Bill => {
      n += 1;
      const at = PERIOD_START_MS + Math.floor((random() * PERIOD_SPAN_MS) / 1000) * 1000;
      const yuan = random() < 0.75 ? 20 + random() * 4980 : 5000 + random() * 95_000;
      return {
        billNo: billNoFor(index, n),
        tenant: spec.id,
        counterparty: COUNTERPARTIES[Math.floor(random() * COUNTERPARTIES.length)] ?? '上海嘉禾物流有限公司',
        kind,
        amountCents: Math.round(yuan * 100),
        status,
        note: status === 'PROCESSED' ? '财务已核对' : null,
        updatedAt: new Date(at).toISOString(),
      };
    };
    for (let i = 0; i < (spec.pending ?? DEFAULT_TENANT_COUNTS.pending); i++) out.push(make('mismatch', 'PENDING'));
    for (let i = 0; i < (spec.overcharge ?? DEFAULT_TENANT_COUNTS.overcharge); i++) out.push(make('overcharge', 'PENDING'));
    for (let i = 0; i < (spec.processed ?? DEFAULT_TENANT_COUNTS.processed); i++) out.push(make('mismatch', 'PROCESSED'));
  });
  return out;
}
