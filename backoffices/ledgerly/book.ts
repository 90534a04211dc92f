import type { Discrepancy, DiscrepancyState, LedgerlyAction, LedgerlyJournalEntry } from './schemas.js';

/** Who committed a mutation, as the journal records it. */
export interface Actor {
  identity: string;
  sessionId: string;
}

interface Entry {
  record: Discrepancy;
  /** Where an under_review / refund_pending record settles; undefined otherwise. */
  settlesTo?: DiscrepancyState;
  timer?: NodeJS.Timeout;
}

/** A refused write: 409 for a state that forbids it, 422 for bad input. */
export interface Refusal {
  status: 409 | 422;
  code: string;
  message: string;
}

function snapshotOf(record: Discrepancy) {
  return { state: record.state, resolution_reason: record.resolutionReason };
}

/**
 * Ledgerly's discrepancies and its journal. Unlike the bundled simulator it
 * guards its state transitions (a second resolve on a record under review is a
 * 409), but edits are not idempotent: every accepted save is a new entry.
 * Resolve and refund settle asynchronously: under_review / refund_pending
 * first, resolved / refunded after the review delay.
 */
export class DiscrepancyBook {
  private entries = new Map<string, Entry>();
  private ordered: Entry[] = [];
  private readonly journalEntries: LedgerlyJournalEntry[] = [];

  constructor(records: Discrepancy[]) {
    for (const record of records) {
      const entry: Entry = { record };
      this.entries.set(record.id, entry);
      this.ordered.push(entry);
    }
    this.ordered.sort((a, b) => compareIds(a.record.id, b.record.id));
  }

  get(id: string): Discrepancy | undefined {
    return this.entries.get(id)?.record;
  }

  forOrg(org: string): Discrepancy[] {
    return this.ordered.filter((e) => e.record.org === org).map((e) => e.record);
  }

  get size(): number {
    return this.ordered.length;
  }

  snapshot(): Discrepancy[] {
    return this.ordered.map((e) => structuredClone(e.record));
  }

  journal(): LedgerlyJournalEntry[] {
    return structuredClone(this.journalEntries);
  }

  /** Why a write may not go ahead, or null. Input (reason, amount) is checked by the caller. */
  refusal(action: LedgerlyAction, id: string): Refusal | null {
    const record = this.get(id);
    if (!record) return { status: 409, code: 'not_found', message: `Discrepancy ${id} not found.` };
    const conflict = (message: string): Refusal => ({ status: 409, code: 'invalid_state', message });
    switch (action) {
      case 'edit':
        if (record.state === 'refunded' || record.state === 'refund_pending') return conflict('Refunded discrepancies can’t be edited.');
        return null;
      case 'resolve':
        if (record.type !== 'billing_error') return conflict('Duplicate charges are refunded, not resolved.');
        if (record.state !== 'open') return conflict(`Only open discrepancies can be resolved (this one is ${record.state}).`);
        if (!record.resolutionReason) return conflict('Add a resolution reason before resolving (More → Edit).');
        return null;
      case 'reopen':
        if (record.state !== 'under_review' && record.state !== 'resolved') {
          return conflict(`Only resolved discrepancies can be reopened (this one is ${record.state}).`);
        }
        return null;
      case 'refund':
        if (record.type !== 'duplicate_charge') return conflict('Only duplicate charges can be refunded.');
        if (record.state !== 'open') return conflict(`Only open duplicate charges can be refunded (this one is ${record.state}).`);
        return null;
    }
  }

  /**
   * Applies an accepted write and journals it with the record's state before
   * and after. Resolve and refund start the settle timer (0 settles at once).
   */
  commit(
    action: LedgerlyAction,
    id: string,
    actor: Actor,
    change: { resolutionReason?: string; settleDelayMs: number; detail?: Record<string, unknown> },
  ): LedgerlyJournalEntry {
    const entry = this.entries.get(id);
    if (!entry) throw new Error(`commit on unknown discrepancy ${id}`);
    const { record } = entry;
    const before = snapshotOf(record);
    const at = new Date().toISOString();
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.settlesTo = undefined;
    switch (action) {
      case 'edit':
        record.resolutionReason = change.resolutionReason ?? null;
        break;
      case 'reopen':
        record.state = 'open';
        break;
      case 'resolve':
        record.state = 'under_review';
        entry.settlesTo = 'resolved';
        break;
      case 'refund':
        record.state = 'refund_pending';
        entry.settlesTo = 'refunded';
        break;
    }
    record.updatedAt = at;
    record.history.push({ at, action, actor: actor.identity, ...(change.detail ? { detail: change.detail } : {}) });
    const journalEntry: LedgerlyJournalEntry = {
      seq: this.journalEntries.length + 1,
      at,
      tenant: record.org,
      billNo: id,
      action,
      identity: actor.identity,
      sessionId: actor.sessionId,
      via: 'ui',
      detail: { before, after: snapshotOf(record), ...change.detail },
    };
    this.journalEntries.push(journalEntry);
    if (entry.settlesTo !== undefined) {
      if (change.settleDelayMs <= 0) settle(entry);
      else {
        entry.timer = setTimeout(() => settle(entry), change.settleDelayMs);
        entry.timer.unref();
      }
    }
    return journalEntry;
  }

  dispose(): void {
    for (const entry of this.ordered) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = undefined;
    }
  }
}

function settle(entry: Entry): void {
  if (entry.settlesTo === undefined) return;
  entry.record.state = entry.settlesTo;
  entry.record.updatedAt = new Date().toISOString();
  entry.settlesTo = undefined;
  entry.timer = undefined;
}

/** N-7002 before N-7010 before N-10001. */
function compareIds(a: string, b: string): number {
  return Number(a.slice(2)) - Number(b.slice(2));
}
