import { JournaledBook, type Actor as BookActor } from '../kit/journaled-book.js';
import type { Bill, BillStatus, JournalEntry, Note } from './schemas.js';

export type WriteAction = 'mark' | 'unmark' | 'refund';

/** Who committed a mutation, as the journal records it: the kit's actor and the door it came through. */
export interface Actor extends BookActor {
  via: 'ui' | 'api';
}

/** An `applied_then_reverted` fault armed on a committed write: once the writing session has been shown the settled state, the bill goes back to `to`. */
interface ArmedRevert {
  shownTo: string;
  to: BillStatus;
  actor: Actor;
}

export interface NoteReceipt {
  noteId: string;
  billNo: string;
  text: string;
}

interface IdempotentNote {
  fingerprint: string;
  receipt: NoteReceipt;
}

const SETTLED_STATUS: Record<WriteAction, BillStatus> = {
  mark: 'PROCESSED',
  unmark: 'PENDING',
  refund: 'REFUNDED',
};

/**
 * The vendor's book of bills and its journal. Like the real vendor it has no
 * uniqueness constraint on state changes: every accepted write is recorded,
 * even a second mark on a bill that is already processed. It refuses only what
 * is semantically impossible. Writes settle asynchronously: PROCESSING first,
 * the target status after the settle delay.
 */
export class Ledger extends JournaledBook<Bill, BillStatus, JournalEntry> {
  private idempotentNotes = new Map<string, IdempotentNote>();
  private readonly armedReverts = new Map<string, ArmedRevert>();
  private noteSeq = 0;

  /** Bills are listed by bill number. */
  constructor(bills: Bill[]) {
    super(bills, { id: (b) => b.billNo, tenant: (b) => b.tenant, compare: (a, b) => (a.billNo < b.billNo ? -1 : 1), noun: 'bill' });
  }

  protected settled(bill: Bill, to: BillStatus): void {
    bill.status = to;
    bill.updatedAt = new Date().toISOString();
  }

  /** The Chinese reason a write is impossible, or null when it may go ahead. */
  refusal(action: WriteAction, billNo: string): string | null {
    const entry = this.entryOf(billNo);
    if (!entry) return '差异单不存在';
    const { record: bill, settlesTo } = entry;
    switch (action) {
      case 'mark':
        if (bill.status === 'REFUNDED') return '该差异单已退款，不能标记处理';
        if (settlesTo === 'REFUNDED') return '该差异单正在退款，请稍后再试';
        return null;
      case 'unmark':
        if (bill.status === 'PENDING') return '该差异单尚未处理，无法撤销';
        if (bill.status === 'REFUNDED') return '该差异单已退款，无法撤销';
        if (settlesTo === 'REFUNDED') return '该差异单正在退款，无法撤销';
        return null;
      case 'refund':
        if (bill.kind !== 'overcharge') return '该差异类型不支持退款';
        if (bill.status === 'REFUNDED') return '该差异单已退款，不能重复退款';
        return null;
    }
  }

  /**
   * Records an accepted write: journal entry, processing record, PROCESSING,
   * and a timer that settles the bill after settleDelayMs (0 settles at once).
   */
  commit(action: WriteAction, billNo: string, actor: Actor, settleDelayMs: number, detail?: Record<string, unknown>): JournalEntry {
    const entry = this.startCommit(billNo);
    const at = new Date().toISOString();
    const bill = entry.record;
    const journalEntry = this.appendJournal({ at, tenant: bill.tenant, billNo, action, ...actor, detail });
    bill.records.push({ at, action, identity: actor.identity, via: actor.via, ...(detail ? { detail } : {}) });
    bill.status = 'PROCESSING';
    bill.updatedAt = at;
    this.settleLater(entry, SETTLED_STATUS[action], settleDelayMs);
    return journalEntry;
  }

  /**
   * Arms the `applied_then_reverted` fault on a committed write: the vendor shows the settled change to the session
   * that wrote it, then undoes it (a downstream check rejecting it). The revert happens right after the first page
   * that shows the writing session the bill settled (`shownTo`), so every other session and the API only ever read
   * the state before the write: the writer saw the change land, an independent readback sees it gone.
   */
  revertOnceShown(billNo: string, actor: Actor, to: BillStatus): void {
    if (this.entryOf(billNo)) this.armedReverts.set(billNo, { shownTo: actor.sessionId, to, actor });
  }

  /** A page was shown to session `sid`: reverts the settled writes armed to revert once that session saw them. */
  shownTo(sid: string): void {
    for (const [billNo, revert] of this.armedReverts) {
      const entry = this.entryOf(billNo);
      if (!entry || revert.shownTo !== sid || entry.settlesTo !== undefined) continue;
      this.armedReverts.delete(billNo);
      const at = new Date().toISOString();
      entry.record.status = revert.to;
      entry.record.updatedAt = at;
      this.appendJournal({
        at,
        tenant: entry.record.tenant,
        billNo,
        action: 'revert',
        ...revert.actor,
        detail: { fault: 'applied_then_reverted', revertedTo: revert.to },
      });
    }
  }

  /**
   * Adds a note through the API. The same idempotency key with the same
   * request answers the stored receipt (replayed: true) and records nothing;
   * with a different request it is a conflict.
   */
  addNote(
    billNo: string,
    actor: Actor,
    text: string,
    idempotencyKey: string,
  ): { receipt: NoteReceipt; replayed: boolean } | { conflict: true } {
    const scopedKey = `${actor.identity}\u0000${idempotencyKey}`;
    const fingerprint = JSON.stringify([billNo, text]);
    const previous = this.idempotentNotes.get(scopedKey);
    if (previous) {
      return previous.fingerprint === fingerprint ? { receipt: previous.receipt, replayed: true } : { conflict: true };
    }
    const entry = this.entryOf(billNo);
    if (!entry) throw new Error(`note on unknown bill ${billNo}`);
    this.noteSeq += 1;
    const at = new Date().toISOString();
    const note: Note = { noteId: `NOTE-${this.noteSeq.toString().padStart(6, '0')}`, text, identity: actor.identity, at };
    entry.record.notes.push(note);
    this.appendJournal({
      at,
      tenant: entry.record.tenant,
      billNo,
      action: 'note',
      ...actor,
      detail: { noteId: note.noteId, text, idempotencyKey },
    });
    const receipt: NoteReceipt = { noteId: note.noteId, billNo, text };
    this.idempotentNotes.set(scopedKey, { fingerprint, receipt });
    return { receipt, replayed: false };
  }
}
