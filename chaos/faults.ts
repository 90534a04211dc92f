import type { FaultSpec } from '../src/simulator/schemas.js';
import { billNoFor } from '../src/simulator/server.js';
import { pick, seededRandom, shuffled } from './rng.js';

/**
 * The soak's fault plan: which bills misbehave and how, drawn from a seeded
 * RNG so a run can be repeated. Faults are scoped to one bill each, so the
 * share of affected items is what --fault-rate says; the one global fault
 * (a redesign of the next few page renders) is installed at the restart.
 */

export interface SoakTenant {
  id: string;
  pending: number;
}

export interface PlannedFault {
  billNo: string;
  spec: FaultSpec;
}

/** Tenant ids the simulator accepts (lowercase letters) that the config also accepts. */
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

export function soakTenants(items: number): SoakTenant[] {
  const count = Math.ceil(items / MAX_ITEMS_PER_TENANT);
  if (count > TENANT_NAMES.length) throw new Error(`at most ${TENANT_NAMES.length * MAX_ITEMS_PER_TENANT} items`);
  const base = Math.floor(items / count);
  return TENANT_NAMES.slice(0, count).map((id, i) => ({ id, pending: base + (i < items % count ? 1 : 0) }));
}

export function pendingBills(tenants: readonly SoakTenant[]): Array<{ tenant: string; billNo: string }> {
  return tenants.flatMap((t) => Array.from({ length: t.pending }, (_, i) => ({ tenant: t.id, billNo: billNoFor(t.id, i + 1) })));
}

/**
 * One fault per chosen bill. `times` keeps most of them transient, as in
 * production: the point is what the first attempt does with them.
 */
export function planFaults(
  bills: ReadonlyArray<{ billNo: string }>,
  faultRate: number,
  seed: number,
  readbackDeadlineMs: number,
): PlannedFault[] {
  const random = seededRandom(seed);
  const chosen = shuffled(random, bills).slice(0, Math.round(bills.length * faultRate));
  const makers: Array<(bill: string) => FaultSpec> = [
    (bill) => ({ kind: 'half_success', bill, times: 1 }),
    (bill) => ({ kind: 'commit_then_timeout', bill, ms: 1500, times: 1 }),
    (bill) => ({ kind: 'error_500', bill, times: 1 }),
    (bill) => ({ kind: 'slow_ms', bill, ms: 2500, times: 4 }),
    // Short, medium, and longer than the readback deadline (inconclusive, so a person decides).
    (bill) => ({ kind: 'async_delay_ms', bill, ms: pick(random, [1500, Math.round(readbackDeadlineMs / 2), readbackDeadlineMs + 5000]) }),
    (bill) => ({ kind: 'session_revoked', bill, times: 1 }),
    (bill) => ({ kind: 'permission_denied', bill, times: 1 }),
    // Bill-scoped, a redesign only changes that bill's detail page renders.
    (bill) => ({ kind: 'redesign', bill, times: 2 }),
  ];
  return [...chosen].sort((a, b) => a.billNo.localeCompare(b.billNo)).map(({ billNo }) => ({ billNo, spec: pick(random, makers)(billNo) }));
}
