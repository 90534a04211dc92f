import type { Bill, BillStatus, JournalEntry, Note } from './schemas.js';

export type WriteAction = 'mark' | 'unmark' | 'refund';

/** Who committed a mutation, as the journal records it. */
export interface Actor {
  identity: string;
  /** The sid of the UI session, or 'api'. */
  sessionId: string;
  via: 'ui' | 'api';
}

interface Entry {
  bill: Bill;
  /** Where a PROCESSING bill will settle; undefined when not PROCESSING. */
  settlesTo?: BillStatus;
  timer?: NodeJS.Timeout;
  /** An `applied_then_reverted` fault: once the writing session has been shown the settled state, the bill goes back to `to`. */
  revert?: { shownTo: string; to: BillStatus; actor: Actor };
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
export class Ledger {
  private entries = new Map<string, Entry>();
  private ordered: Entry[] = [];
  private readonly journalEntries: JournalEntry[] = [];
  private idempotentNotes = new Map<string, IdempotentNote>();
  private noteSeq = 0;

  /** Takes ownership of the bills (they come fresh from the seed generator). */
  constructor(bills: Bill[]) {
    for (const bill of bills) {
      const entry: Entry = { bill };
      this.entries.set(bill.billNo, entry);
      this.ordered.push(entry);
    }
    this.ordered.sort((a, b) => (a.bill.billNo < b.bill.billNo ? -1 : 1));
  }

  /** The live bill (do not mutate outside the ledger). */
  get(billNo: string): Bill | undefined {
    return this.entries.get(billNo)?.bill;
  }

  /** A tenant's bills ordered by bill number. */
  forTenant(tenant: string): Bill[] {
    return this.ordered.filter((e) => e.bill.tenant === tenant).map((e) => e.bill);
  }

  get size(): number {
    return this.ordered.length;
  }

  snapshot(): Bill[] {
    return this.ordered.map((e) => structuredClone(e.bill));
  }

  journal(): JournalEntry[] {
    return structuredClone(this.journalEntries);
  }

  /** The Chinese reason a write is impossible, or null when it may go ahead. */
  refusal(action: WriteAction, billNo: string): string | null {
    const entry = this.entries.get(billNo);
    if (!entry) return '差异单不存在';
    const { bill, settlesTo } = entry;
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
    const entry = this.entries.get(billNo);
    if (!entry) throw new Error(`commit on unknown bill ${billNo}`);
    const at = new Date().toISOString();
    const { bill } = entry;
    const journalEntry = this.appendJournal({ at, tenant: bill.tenant, billNo, action, ...actor, detail });
    bill.records.push({ at, action, identity: actor.identity, via: actor.via, ...(detail ? { detail } : {}) });
    bill.status = 'PROCESSING';
    bill.updatedAt = at;
    entry.settlesTo = SETTLED_STATUS[action];
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (settleDelayMs <= 0) {
      settle(entry);
    } else {
      entry.timer = setTimeout(() => settle(entry), settleDelayMs);
      entry.timer.unref();
    }
    return journalEntry;
  }

  /**
   * Arms the `applied_then_reverted` fault on a committed write: the vendor shows the settled change to the session
   * that wrote it, then undoes it (a downstream check rejecting it). The revert happens right after the first page
   * that shows the writing session the bill settled (`shownTo`), so every other session and the API only ever read
   * the state before the write: the writer saw the change land, an independent readback sees it gone.
   */
  revertOnceShown(billNo: string, actor: Actor, to: BillStatus): void {
    const entry = this.entries.get(billNo);
    if (entry) entry.revert = { shownTo: actor.sessionId, to, actor };
  }

  /** A page was shown to session `sid`: reverts the settled writes armed to revert once that session saw them. */
  shownTo(sid: string): void {
    for (const entry of this.ordered) {
      const { revert } = entry;
      if (!revert || revert.shownTo !== sid || entry.settlesTo !== undefined) continue;
      entry.revert = undefined;
      const at = new Date().toISOString();
      entry.bill.status = revert.to;
      entry.bill.updatedAt = at;
      this.appendJournal({
        at,
        tenant: entry.bill.tenant,
        billNo: entry.bill.billNo,
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
    const entry = this.entries.get(billNo);
    if (!entry) throw new Error(`note on unknown bill ${billNo}`);
    this.noteSeq += 1;
    const at = new Date().toISOString();
    const note: Note = { noteId: `NOTE-${this.noteSeq.toString().padStart(6, '0')}`, text, identity: actor.identity, at };
    entry.bill.notes.push(note);
    this.appendJournal({
      at,
      tenant: entry.bill.tenant,
      billNo,
      action: 'note',
      ...actor,
      detail: { noteId: note.noteId, text, idempotencyKey },
    });
    const receipt: NoteReceipt = { noteId: note.noteId, billNo, text };
    this.idempotentNotes.set(scopedKey, { fingerprint, receipt });
    return { receipt, replayed: false };
  }

  /** Stops pending settle timers; the ledger is being replaced or the server is closing. */
  dispose(): void {
    for (const entry of this.ordered) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = undefined;
    }
  }

  private appendJournal(fields: Omit<JournalEntry, 'seq'>): JournalEntry {
    const entry: JournalEntry = { seq: this.journalEntries.length + 1, ...fields };
    if (entry.detail === undefined) delete entry.detail;
    this.journalEntries.push(entry);
    return entry;
  }
}

function settle(entry: Entry): void {
  if (entry.settlesTo === undefined) return;
  entry.bill.status = entry.settlesTo;
  entry.bill.updatedAt = new Date().toISOString();
  entry.settlesTo = undefined;
  entry.timer = undefined;
}
