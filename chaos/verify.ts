import type { Claim } from '../src/domain/claim.js';
import type { TakeoverEntry } from '../src/app/ports/takeovers.js';
import { idempotencyKey } from '../src/domain/task.js';
import type { SoakMutation } from './back-office.js';

/**
 * The soak's verdict, computed from two independent records: the vendor's
 * journal and final item states (what the vendor really did) and Paperclip's
 * own claims, queue and audit (what it concluded). Invariants must hold
 * exactly; the four rates are measurements.
 */

export interface VerifyInput {
  /** The soak's items: one write of `action` per pending item, under its tenant's task. */
  items: Array<{ tenant: string; billNo: string; taskId: string }>;
  /** The site-pack action every item needs (mark_processed on the simulator, resolve on Ledgerly). */
  action: string;
  /** Each site-pack action's target status (from the pack), for the false-success check. */
  targetStatus: Record<string, string | undefined>;
  /** The identity the vendor's journal names for each tenant's writes. */
  identityOf: (tenant: string) => string;
  /** The vendor's journal, each entry attributed to the site-pack action it belongs to. */
  journal: SoakMutation[];
  finalStatus: Map<string, string>;
  claims: Claim[];
  queue: TakeoverEntry[];
  /** Audit event types per key (for the rollback counts). */
  auditTypes: Map<string, string[]>;
  /** Keys of items whose routing failed before any claim, recorded in their audit trail and mailed to operators. */
  routingFailed?: ReadonlySet<string>;
}

export interface SoakVerdict {
  invariants: {
    maxMutationsPerKey: number;
    keysWithMoreThanOneMutation: Array<{ billNo: string; action: string; vendorAction: string; mutations: number }>;
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

  // Mutations per key: every committed vendor write, keyed the way Paperclip keys the write. An action made of
  // more than one vendor write (a reason saved, then resolve) may leave each of them once, never one of them twice.
  const perKey = new Map<string, { billNo: string; action: string; vendorAction: string; mutations: number }>();
  const unattributed: SoakVerdict['invariants']['unattributedMutations'] = [];
  for (const entry of input.journal) {
    const item = taskOf.get(entry.billNo);
    const action = entry.action;
    if (!item || entry.identity !== input.identityOf(item.tenant)) {
      unattributed.push({ billNo: entry.billNo, action, identity: entry.identity });
      continue;
    }
    const key = idempotencyKey({ taskId: item.taskId, tenant: item.tenant, billNo: entry.billNo, action });
    const slot = `${key} ${entry.vendorAction}`;
    const row = perKey.get(slot) ?? { billNo: entry.billNo, action, vendorAction: entry.vendorAction, mutations: 0 };
    row.mutations += 1;
    perKey.set(slot, row);
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
    if (input.targetStatus[claim.action] !== vendorStatus)
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
    const key = idempotencyKey({ taskId: item.taskId, tenant: item.tenant, billNo: item.billNo, action: input.action });
    const claim = claimsByKey.get(key);
    const entry = queueByKey.get(key);
    // No claim, nothing written, and the failure recorded and mailed: settled as failed, never silently dropped.
    const status = claim?.status ?? (input.routingFailed?.has(key) ? 'ROUTING_FAILED' : 'NONE');
    claimStatus[status] = (claimStatus[status] ?? 0) + 1;
    if (entry) wentToTakeover += 1;
    if (status === 'DONE') {
      done += 1;
      if (!entry) doneWithoutOperator += 1;
    }
    const inQueue = status === 'TAKEOVER' && entry?.status === 'OPEN';
    if (inQueue) openInTakeover += 1;
    const settled = ['DONE', 'STALE', 'FAILED', 'REJECTED', 'EXPIRED', 'ROUTING_FAILED'].includes(status);
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
