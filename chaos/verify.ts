import type { Claim } from '../src/domain/claim.js';
import type { TakeoverEntry } from '../src/adapters/dynamodb/takeover-store.js';
import type { JournalEntry } from '../src/simulator/schemas.js';
import { idempotencyKey } from '../src/domain/task.js';

/**
 * The soak's verdict, computed from two independent records: the simulator's
 * journal and final bill states (what the vendor really did) and Paperclip's
 * own claims, queue and audit (what it concluded). Invariants must hold
 * exactly; the four rates are measurements.
 */

/** Journal action -> site-pack action, to rebuild each mutation's idempotency key. */
const SITE_ACTION: Record<JournalEntry['action'], string> = {
  mark: 'mark_processed',
  unmark: 'unmark_processed',
  refund: 'refund',
  note: 'add_note',
};
const TARGET_STATUS: Record<string, string> = { mark_processed: 'PROCESSED', unmark_processed: 'PENDING', refund: 'REFUNDED' };

export interface VerifyInput {
  /** The soak's items: one mark_processed per pending bill, under its tenant's task. */
  items: Array<{ tenant: string; billNo: string; taskId: string }>;
  journal: JournalEntry[];
  finalStatus: Map<string, string>;
  claims: Claim[];
  queue: TakeoverEntry[];
  /** Audit event types per key (for the rollback counts). */
  auditTypes: Map<string, string[]>;
}

export interface SoakVerdict {
  invariants: {
    maxMutationsPerKey: number;
    keysWithMoreThanOneMutation: Array<{ billNo: string; action: string; mutations: number }>;
    falseSuccesses: Array<{ key: string; billNo: string; action: string; vendorStatus: string }>;
    lostItems: Array<{ key: string; billNo: string; claimStatus: string | null; queue: string | null }>;
    unattributedMutations: Array<{ billNo: string; action: string; identity: string }>;
  };
  counts: {
    items: number;
    claimStatus: Record<string, number>;
    done: number;
    doneWithoutOperator: number;
    wentToTakeover: number;
    openInTakeover: number;
    vendorMutations: number;
    rollbackAttempted: number;
    rollbackSucceeded: number;
    misoperations: number;
  };
  metrics: {
    misoperationRate: number;
    completionRate: number;
    takeoverRate: number;
    /** null when nothing needed rolling back. */
    rollbackSuccessRate: number | null;
  };
  ok: boolean;
}

const rate = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 10_000) / 10_000);

export function verifySoak(input: VerifyInput): SoakVerdict {
  const taskOf = new Map(input.items.map((i) => [i.billNo, i]));
  const claimsByKey = new Map(input.claims.map((c) => [c.key, c]));
  const queueByKey = new Map(input.queue.map((e) => [e.key, e]));

  // Mutations per key: every committed vendor write, keyed the way Paperclip keys the write.
  const perKey = new Map<string, { billNo: string; action: string; mutations: number }>();
  const unattributed: SoakVerdict['invariants']['unattributedMutations'] = [];
  for (const entry of input.journal) {
    const item = taskOf.get(entry.billNo);
    const action = SITE_ACTION[entry.action];
    if (!item || entry.identity !== `svc-recon-${item.tenant}`) {
      unattributed.push({ billNo: entry.billNo, action, identity: entry.identity });
      continue;
    }
    const key = idempotencyKey({ taskId: item.taskId, tenant: item.tenant, billNo: entry.billNo, action });
    const row = perKey.get(key) ?? { billNo: entry.billNo, action, mutations: 0 };
    row.mutations += 1;
    perKey.set(key, row);
  }
  const multiple = [...perKey.values()].filter((r) => r.mutations > 1);

  // False success: done in Paperclip's records, not so at the vendor (the latest done write on a bill decides).
  const falseSuccesses: SoakVerdict['invariants']['falseSuccesses'] = [];
  const doneByBill = new Map<string, Claim>();
  for (const c of input.claims) {
    if (c.status !== 'DONE') continue;
    const seen = doneByBill.get(c.billNo);
    if (!seen || seen.updatedAt < c.updatedAt) doneByBill.set(c.billNo, c);
  }
  for (const claim of doneByBill.values()) {
    const vendorStatus = input.finalStatus.get(claim.billNo) ?? 'MISSING';
    if (TARGET_STATUS[claim.action] !== vendorStatus)
      falseSuccesses.push({ key: claim.key, billNo: claim.billNo, action: claim.action, vendorStatus });
  }

  // Lost: neither settled by a terminal claim nor waiting for a person in the queue.
  const lost: SoakVerdict['invariants']['lostItems'] = [];
  let done = 0;
  let doneWithoutOperator = 0;
  let openInTakeover = 0;
  let wentToTakeover = 0;
  const claimStatus: Record<string, number> = {};
  for (const item of input.items) {
    const key = idempotencyKey({ taskId: item.taskId, tenant: item.tenant, billNo: item.billNo, action: 'mark_processed' });
    const claim = claimsByKey.get(key);
    const entry = queueByKey.get(key);
    const status = claim?.status ?? 'NONE';
    claimStatus[status] = (claimStatus[status] ?? 0) + 1;
    if (entry) wentToTakeover += 1;
    if (status === 'DONE') {
      done += 1;
      if (!entry) doneWithoutOperator += 1;
    }
    const inQueue = status === 'TAKEOVER' && entry?.status === 'OPEN';
    if (inQueue) openInTakeover += 1;
    const settled = ['DONE', 'STALE', 'FAILED', 'REJECTED', 'EXPIRED'].includes(status);
    if (!settled && !inQueue) lost.push({ key, billNo: item.billNo, claimStatus: claim?.status ?? null, queue: entry?.status ?? null });
  }

  let rollbackAttempted = 0;
  let rollbackSucceeded = 0;
  for (const types of input.auditTypes.values()) {
    rollbackAttempted += types.filter((t) => t === 'compensation_started').length;
    rollbackSucceeded += types.filter((t) => t === 'compensated').length;
  }

  const misoperations = multiple.length + falseSuccesses.length + unattributed.length;
  const items = input.items.length;
  const verdict: SoakVerdict = {
    invariants: {
      maxMutationsPerKey: Math.max(0, ...[...perKey.values()].map((r) => r.mutations)),
      keysWithMoreThanOneMutation: multiple,
      falseSuccesses,
      lostItems: lost,
      unattributedMutations: unattributed,
    },
    counts: {
      items,
      claimStatus,
      done,
      doneWithoutOperator,
      wentToTakeover,
      openInTakeover,
      vendorMutations: input.journal.length,
      rollbackAttempted,
      rollbackSucceeded,
      misoperations,
    },
    metrics: {
      misoperationRate: rate(misoperations, items),
      completionRate: rate(done, items),
      takeoverRate: rate(wentToTakeover, items),
      rollbackSuccessRate: rollbackAttempted === 0 ? null : rate(rollbackSucceeded, rollbackAttempted),
    },
    ok: false,
  };
  verdict.ok = multiple.length === 0 && falseSuccesses.length === 0 && lost.length === 0 && unattributed.length === 0;
  return verdict;
}
