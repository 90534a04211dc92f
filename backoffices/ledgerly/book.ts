import { JournaledBook, type Actor, type Refusal, type UiWrite } from '../kit/journaled-book.js';
import type { Discrepancy, DiscrepancyState, LedgerlyAction, LedgerlyJournalEntry } from './schemas.js';

export type { Actor, Refusal };

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
export class DiscrepancyBook extends JournaledBook<Discrepancy, DiscrepancyState, LedgerlyJournalEntry> {
  constructor(records: Discrepancy[]) {
    super(records, { id: (r) => r.id, tenant: (r) => r.org, compare: (a, b) => compareIds(a.id, b.id), noun: 'discrepancy' });
  }

  protected settled(record: Discrepancy, to: DiscrepancyState): void {
    record.state = to;
    record.updatedAt = new Date().toISOString();
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
  commit(write: UiWrite<LedgerlyAction> & { resolutionReason?: string }): LedgerlyJournalEntry {
    const { action, actor, detail } = write;
    return this.commitUiWrite(write, snapshotOf, (record, at) => {
      record.history.push({ at, action, actor: actor.identity, ...(detail ? { detail } : {}) });
      switch (action) {
        case 'edit':
          record.resolutionReason = write.resolutionReason ?? null;
          return undefined;
        case 'reopen':
          record.state = 'open';
          return undefined;
        case 'resolve':
          record.state = 'under_review';
          return 'resolved';
        case 'refund':
          record.state = 'refund_pending';
          return 'refunded';
      }
    });
  }
}

/** N-7002 before N-7010 before N-10001. */
function compareIds(a: string, b: string): number {
  return Number(a.slice(2)) - Number(b.slice(2));
}
