/**
 * What every in-repo back office keeps of its records: the live records in their listing order, the
 * ground-truth journal (one entry per committed mutation, numbered from 1), and the timers of writes that
 * settle later (a record shows a pending state first, its target state after the settle delay). A back office
 * adds what it refuses and what each of its actions changes.
 */

/** Who committed a mutation, as the journal records it. */
export interface Actor {
  identity: string;
  /** The sid of the UI session (the simulator's API: 'api'). */
  sessionId: string;
}

/** A refused write: 409 for a state that forbids it, 422 for bad input. */
export interface Refusal {
  status: 409 | 422;
  code: string;
  message: string;
}

export interface BookEntry<R, S> {
  record: R;
  /** Where a pending record settles; undefined when it is not pending. */
  settlesTo?: S;
  timer?: NodeJS.Timeout;
}

/** How a book knows its records: their id, their tenant (org), their listing order, what one is called. */
export interface BookKeys<R> {
  id(record: R): string;
  tenant(record: R): string;
  /** The listing order; the order given when absent. */
  compare?(a: R, b: R): number;
  /** e.g. `bill`, in the error of a commit on an unknown id. */
  noun: string;
}

/** A write made through a back office's pages, as its book commits it. */
export interface UiWrite<A extends string> {
  action: A;
  /** The record's id. */
  id: string;
  actor: Actor;
  /** How long a write that settles later stays pending (0 settles at once). */
  settleDelayMs: number;
  /** What the journal entry's detail adds to the record's state before and after. */
  detail?: Record<string, unknown> | undefined;
}

export abstract class JournaledBook<R extends { updatedAt: string }, S, J extends { seq: number; detail?: Record<string, unknown> }> {
  private readonly entries = new Map<string, BookEntry<R, S>>();
  private readonly ordered: BookEntry<R, S>[] = [];
  private readonly journalEntries: J[] = [];

  /** Takes ownership of the records (they come fresh from the seed generator). */
  constructor(
    records: R[],
    private readonly keys: BookKeys<R>,
  ) {
    for (const record of records) {
      const entry: BookEntry<R, S> = { record };
      this.entries.set(keys.id(record), entry);
      this.ordered.push(entry);
    }
    const { compare } = keys;
    if (compare) this.ordered.sort((a, b) => compare(a.record, b.record));
  }

  /** Puts a pending record in its target state (and stamps it). */
  protected abstract settled(record: R, to: S): void;

  /** The live record (do not mutate outside the book). */
  get(id: string): R | undefined {
    return this.entries.get(id)?.record;
  }

  /** A tenant's records in listing order. */
  forTenant(tenant: string): R[] {
    return this.ordered.filter((e) => this.keys.tenant(e.record) === tenant).map((e) => e.record);
  }

  get size(): number {
    return this.ordered.length;
  }

  snapshot(): R[] {
    return this.ordered.map((e) => structuredClone(e.record));
  }

  journal(): J[] {
    return structuredClone(this.journalEntries);
  }

  /** Stops pending settle timers; the book is being replaced or the server is closing. */
  dispose(): void {
    for (const entry of this.ordered) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = undefined;
    }
  }

  protected entryOf(id: string): BookEntry<R, S> | undefined {
    return this.entries.get(id);
  }

  /** The entry a commit changes, its earlier pending settle called off. */
  protected startCommit(id: string): BookEntry<R, S> {
    const entry = this.entries.get(id);
    if (!entry) throw new Error(`commit on unknown ${this.keys.noun} ${id}`);
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.settlesTo = undefined;
    return entry;
  }

  /** The record settles to `to` after `delayMs` (0 settles at once). */
  protected settleLater(entry: BookEntry<R, S>, to: S, delayMs: number): void {
    entry.settlesTo = to;
    if (delayMs <= 0) {
      this.settle(entry);
      return;
    }
    entry.timer = setTimeout(() => this.settle(entry), delayMs);
    entry.timer.unref();
  }

  /**
   * Commits a write made through the pages: `apply` changes the record and answers where it settles later (undefined:
   * it does not); the record is stamped, and the journal gets its state before and after (`snapshot`), as `ui`.
   */
  protected commitUiWrite<A extends string>(
    write: UiWrite<A>,
    snapshot: (record: R) => Record<string, unknown>,
    apply: (record: R, at: string) => S | undefined,
  ): J {
    const entry = this.startCommit(write.id);
    const { record } = entry;
    const before = snapshot(record);
    const at = new Date().toISOString();
    const settlesTo = apply(record, at);
    record.updatedAt = at;
    const journalEntry = this.appendJournal({
      at,
      tenant: this.keys.tenant(record),
      billNo: write.id,
      action: write.action,
      identity: write.actor.identity,
      sessionId: write.actor.sessionId,
      via: 'ui',
      detail: { before, after: snapshot(record), ...write.detail },
      // The fields every in-repo back office journals (kit/schemas.ts, journalEntrySchemaFor); J names its actions.
    } as unknown as Omit<J, 'seq'>);
    if (settlesTo !== undefined) this.settleLater(entry, settlesTo, write.settleDelayMs);
    return journalEntry;
  }

  /** Journals a committed mutation; an entry without detail has no `detail` key. */
  protected appendJournal(fields: Omit<J, 'seq'>): J {
    const entry = { seq: this.journalEntries.length + 1, ...fields } as J;
    if (entry.detail === undefined) delete entry.detail;
    this.journalEntries.push(entry);
    return entry;
  }

  private settle(entry: BookEntry<R, S>): void {
    if (entry.settlesTo === undefined) return;
    this.settled(entry.record, entry.settlesTo);
    entry.settlesTo = undefined;
    entry.timer = undefined;
  }
}
