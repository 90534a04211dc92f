import type { FaultKind, FaultSpec } from '../backoffices/simulator/schemas.js';
import type { SoakBackOffice, SoakTenant } from './back-office.js';
import { pick, seededRandom, shuffled } from './rng.js';

/**
 * The soak's fault plan: which bills misbehave and how, drawn from a seeded
 * RNG so a run can be repeated. Faults are scoped to one bill each, so the
 * share of affected items is what --fault-rate says; the one global fault
 * (a redesign of the next few page renders) is installed at the restart.
 */

export type { SoakTenant };

export interface PlannedFault {
  billNo: string;
  spec: FaultSpec;
}

/** Tenant ids both back offices accept (lowercase letters) that the config also accepts. */
const TENANT_NAMES = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'hooli',
  'wonka',
  'stark',
  'wayne',
  'tyrell',
  'soylent',
  'oscorp',
  'cyberdyne',
];
export const MAX_ITEMS_PER_TENANT = 50;

export function soakTenants(items: number, maxTenants = TENANT_NAMES.length): SoakTenant[] {
  const count = Math.ceil(items / MAX_ITEMS_PER_TENANT);
  const most = Math.min(maxTenants, TENANT_NAMES.length);
  if (count > most) throw new Error(`at most ${most * MAX_ITEMS_PER_TENANT} items on this back office`);
  const base = Math.floor(items / count);
  return TENANT_NAMES.slice(0, count).map((id, i) => ({ id, pending: base + (i < items % count ? 1 : 0) }));
}

export function pendingBills(
  tenants: readonly SoakTenant[],
  backOffice: Pick<SoakBackOffice, 'itemKey'>,
): Array<{ tenant: string; billNo: string }> {
  return tenants.flatMap((t, index) =>
    Array.from({ length: t.pending }, (_, i) => ({ tenant: t.id, billNo: backOffice.itemKey(index, t.id, i + 1) })),
  );
}

/**
 * One fault per chosen bill. `times` keeps most of them transient, as in
 * production: the point is what the first attempt does with them. Without
 * `kinds` each fault is drawn from every kind; with `kinds` only those are
 * used, in turn (the first chosen bill gets the first kind, …), so a short
 * run still meets each of them.
 */
export function planFaults(
  bills: ReadonlyArray<{ billNo: string }>,
  faultRate: number,
  seed: number,
  readbackDeadlineMs: number,
  kinds?: readonly FaultKind[],
): PlannedFault[] {
  const random = seededRandom(seed);
  const chosen = shuffled(random, bills).slice(0, Math.round(bills.length * faultRate));
  const makers: Record<FaultKind, (bill: string) => FaultSpec> = {
    half_success: (bill) => ({ kind: 'half_success', bill, times: 1 }),
    commit_then_timeout: (bill) => ({ kind: 'commit_then_timeout', bill, ms: 1500, times: 1 }),
    error_500: (bill) => ({ kind: 'error_500', bill, times: 1 }),
    slow_ms: (bill) => ({ kind: 'slow_ms', bill, ms: 2500, times: 4 }),
    // Short, medium, and longer than the readback deadline (inconclusive, so a person decides).
    async_delay_ms: (bill) => ({
      kind: 'async_delay_ms',
      bill,
      ms: pick(random, [1500, Math.round(readbackDeadlineMs / 2), readbackDeadlineMs + 5000]),
    }),
    session_revoked: (bill) => ({ kind: 'session_revoked', bill, times: 1 }),
    permission_denied: (bill) => ({ kind: 'permission_denied', bill, times: 1 }),
    // Bill-scoped, a redesign only changes that bill's detail page renders.
    redesign: (bill) => ({ kind: 'redesign', bill, times: 2 }),
    // The commit request turned away once (429, Retry-After 1 s): not committed, retried by the policy.
    rate_limited: (bill) => ({ kind: 'rate_limited', bill, requests: 'writes', ms: 1000, times: 1 }),
    // Only when named in `kinds`: a write the vendor undoes ends in takeover by design, which the soak's mix does not plan for.
    applied_then_reverted: (bill) => ({ kind: 'applied_then_reverted', bill, times: 1 }),
  };
  const sorted = [...chosen].sort((a, b) => a.billNo.localeCompare(b.billNo));
  if (kinds && kinds.length > 0) return sorted.map(({ billNo }, i) => ({ billNo, spec: makers[kinds[i % kinds.length]!](billNo) }));
  const all = Object.entries(makers)
    .filter(([kind]) => kind !== 'applied_then_reverted')
    .map(([, make]) => make);
  return sorted.map(({ billNo }) => ({ billNo, spec: pick(random, all)(billNo) }));
}
