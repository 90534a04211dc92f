import type { ItemFacts, ItemOutcome } from './classify.js';

/**
 * The four metrics over a set of classified items. Definitions (and what the
 * records cannot show) are in docs/report.md; the code follows them.
 */

export interface Ratio {
  count: number;
  of: number;
  /** count / of, or null when nothing was counted (no division by zero, no fake 0 %). */
  rate: number | null;
}

export interface BatchRow {
  tenant: string;
  task: string;
  finishedAt?: string;
  read: number;
  items: number;
  counts: Record<string, number>;
  /** 429s the vendor answered the batch's items with (batch.json `rateLimited`; absent: none). */
  rateLimited?: number;
  /** Time the items sat out Retry-After waits, ms (batch.json `rateLimitWaitMs`). */
  rateLimitWaitMs?: number;
  /** Time the items' requests waited for the request pace, ms (batch.json `paceWaitMs`). */
  paceWaitMs?: number;
  error?: string;
}

export interface ReportData {
  generatedAt: string;
  since?: string;
  tenant?: string;
  /** Items: one per idempotency key (a claim), compensation runs excluded. */
  items: number;
  outcomes: Record<ItemOutcome, number>;
  /** Keys (items and compensation runs) that reached at least one commit: the claim moved to WRITING. */
  writeAttempts: number;
  /** Commits in total (write_started events), retries included. */
  commits: number;
  misoperations: {
    total: number;
    unintendedState: number;
    unprovenRecommit: number;
    outcomeContradicted: number;
    concurrentDuplicate: number;
    keys: string[];
  };
  falseSuccessCaught: number;
  sessionLost: number;
  degraded: number;
  /** Compensation runs (inverse writes) among the claims. */
  compensationRuns: number;
  rollback: { attempted: number; succeeded: number };
  rates: { misoperation: Ratio; completion: Ratio; takeover: Ratio; rollbackSuccess: Ratio };
  byTenant: Array<{ tenant: string; items: number; done: number; takeover: number; misoperations: number; writeAttempts: number }>;
  batches: BatchRow[];
}

const ratio = (count: number, of: number): Ratio => ({ count, of, rate: of > 0 ? count / of : null });

const OUTCOME_ORDER: readonly ItemOutcome[] = [
  'done',
  'takeover',
  'stale',
  'rejected',
  'expired',
  'blocked',
  'awaiting_approval',
  'in_progress',
  'failed',
];

/**
 * Two different keys that committed the same action on the same bill while
 * both were in flight (each read the pre-state before the other's readback)
 * acted on the same state: the vendor may hold two mutations. The later one
 * is counted.
 */
export function concurrentDuplicates(items: readonly ItemFacts[]): Set<string> {
  const groups = new Map<string, ItemFacts[]>();
  for (const item of items) {
    if (!item.inFlight || item.commits === 0) continue;
    const id = `${item.tenant}|${item.billNo}|${item.action}`;
    groups.set(id, [...(groups.get(id) ?? []), item]);
  }
  const duplicates = new Set<string>();
  for (const group of groups.values()) {
    const sorted = [...group].sort((a, b) => a.inFlight!.from.localeCompare(b.inFlight!.from));
    for (let i = 1; i < sorted.length; i++) {
      const later = sorted[i]!;
      if (sorted.slice(0, i).some((earlier) => earlier.key !== later.key && earlier.inFlight!.to >= later.inFlight!.from))
        duplicates.add(later.key);
    }
  }
  return duplicates;
}

export function computeReport(
  all: readonly ItemFacts[],
  batches: readonly BatchRow[],
  options: { since?: Date; tenant?: string } = {},
): ReportData {
  const items = all.filter((i) => !i.compensates);
  const outcomes = Object.fromEntries(OUTCOME_ORDER.map((o) => [o, 0])) as Record<ItemOutcome, number>;
  for (const item of items) outcomes[item.outcome] += 1;
  const duplicates = concurrentDuplicates(all);
  const misoperated = all.filter((i) => i.misoperation || duplicates.has(i.key));
  const writeAttempts = all.filter((i) => i.commits > 0).length;
  const rollback = items.reduce(
    (sum, i) => ({
      attempted: sum.attempted + (i.compensation?.attempted ?? 0),
      succeeded: sum.succeeded + (i.compensation?.succeeded ?? 0),
    }),
    { attempted: 0, succeeded: 0 },
  );
  const tenants = [...new Set(items.map((i) => i.tenant))].sort();
  return {
    generatedAt: new Date().toISOString(),
    ...(options.since ? { since: options.since.toISOString() } : {}),
    ...(options.tenant ? { tenant: options.tenant } : {}),
    items: items.length,
    outcomes,
    writeAttempts,
    commits: all.reduce((n, i) => n + i.commits, 0),
    misoperations: {
      total: misoperated.length,
      unintendedState: all.filter((i) => i.unintendedState).length,
      unprovenRecommit: all.filter((i) => i.unprovenRecommit).length,
      outcomeContradicted: all.filter((i) => i.outcomeContradicted).length,
      concurrentDuplicate: duplicates.size,
      keys: misoperated.map((i) => i.key).sort(),
    },
    falseSuccessCaught: all.filter((i) => i.falseSuccessCaught).length,
    sessionLost: all.filter((i) => i.sessionLost).length,
    degraded: all.filter((i) => i.degraded).length,
    compensationRuns: all.length - items.length,
    rollback,
    rates: {
      // Compensation runs are writes too: a wrong inverse is a misoperation, so they count in both terms.
      misoperation: ratio(misoperated.length, writeAttempts),
      completion: ratio(outcomes.done, items.length),
      takeover: ratio(outcomes.takeover, items.length),
      rollbackSuccess: ratio(rollback.succeeded, rollback.attempted),
    },
    byTenant: tenants.map((tenant) => {
      const mine = items.filter((i) => i.tenant === tenant);
      return {
        tenant,
        items: mine.length,
        done: mine.filter((i) => i.outcome === 'done').length,
        takeover: mine.filter((i) => i.outcome === 'takeover').length,
        misoperations: misoperated.filter((i) => i.tenant === tenant).length,
        writeAttempts: all.filter((i) => i.tenant === tenant && i.commits > 0).length,
      };
    }),
    batches: [...batches].sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '')),
  };
}

export function formatRate(r: Ratio): string {
  return r.rate === null ? '—' : `${(r.rate * 100).toFixed(1)}%`;
}

/**
 * What a batch met of the vendor's rate limit, in words ("rate limited (429) 3, waited 4.0 s; paced 12.3 s"), or ''
 * when its items met none and waited for no pace.
 */
export function describeRateLimits(b: Pick<BatchRow, 'rateLimited' | 'rateLimitWaitMs' | 'paceWaitMs'>): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const parts = [
    b.rateLimited ? `rate limited (429) ${b.rateLimited}${b.rateLimitWaitMs ? `, waited ${seconds(b.rateLimitWaitMs)}` : ''}` : '',
    b.paceWaitMs ? `paced ${seconds(b.paceWaitMs)}` : '',
  ];
  return parts.filter(Boolean).join('; ');
}
