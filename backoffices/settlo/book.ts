import type { Bill, BillStatus, SettloAction, SettloJournalEntry } from './schemas.js';

export interface Actor {
  identity: string;
  sessionId: string;
}

export interface Refusal {
  status: 409 | 422;
  code: string;
  message: string;
}

interface Entry {
  bill: Bill;
  timer?: NodeJS.Timeout;
}

function snapshotOf(bill: Bill) {
  return { status: bill.status, note: bill.note };
}

/**
 * The bills and the ground-truth journal: one entry per committed mutation, with the bill's state before and
 * after. 处理 (settle) moves a pending mismatch to 处理中 (PROCESSING) and, after the review delay, to 已处理;
 * 撤回 (reopen) puts it back to 待处理; 退款 (refund) refunds an overcharge at once.
 */
export class BillBook {
  private readonly entries = new Map<string, Entry>();
  private readonly ordered: Entry[] = [];
  private readonly journalEntries: SettloJournalEntry[] = [];

  constructor(bills: Bill[]) {
    for (const bill of bills) {
      const entry = { bill };
      this.entries.set(bill.billNo, entry);
      this.ordered.push(entry);
    }
  }

  get(billNo: string): Bill | undefined {
    return this.entries.get(billNo)?.bill;
  }

  forTenant(tenant: string): Bill[] {
    return this.ordered.filter((e) => e.bill.tenant === tenant).map((e) => e.bill);
  }

  get size(): number {
    return this.ordered.length;
  }

  snapshot(): Bill[] {
    return this.ordered.map((e) => structuredClone(e.bill));
  }

  journal(): SettloJournalEntry[] {
    return structuredClone(this.journalEntries);
  }

  refusal(action: SettloAction, billNo: string): Refusal | null {
    const bill = this.get(billNo);
    if (!bill) return { status: 409, code: 'not_found', message: `单号 ${billNo} 不存在` };
    const conflict = (message: string): Refusal => ({ status: 409, code: 'invalid_state', message });
    switch (action) {
      case 'settle':
        if (bill.kind !== 'mismatch') return conflict('多收款项请走退款流程');
        if (bill.status !== 'PENDING') return conflict(`该单据当前状态不可处理（${bill.status}）`);
        return null;
      case 'reopen':
        if (bill.kind !== 'mismatch' || (bill.status !== 'PROCESSING' && bill.status !== 'PROCESSED')) {
          return conflict(`该单据当前状态不可撤回（${bill.status}）`);
        }
        return null;
      case 'refund':
        if (bill.kind !== 'overcharge') return conflict('只有多收款项可以退款');
        if (bill.status !== 'PENDING') return conflict(`该单据当前状态不可退款（${bill.status}）`);
        return null;
    }
  }

  commit(
    action: SettloAction,
    billNo: string,
    actor: Actor,
    change: { note?: string; settleDelayMs: number; detail?: Record<string, unknown> },
  ): SettloJournalEntry {
    const entry = this.entries.get(billNo);
    if (!entry) throw new Error(`commit on unknown bill ${billNo}`);
    const { bill } = entry;
    const before = snapshotOf(bill);
    const at = new Date().toISOString();
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    let settlesTo: BillStatus | undefined;
    switch (action) {
      case 'settle':
        bill.status = 'PROCESSING';
        bill.note = change.note ?? null;
        settlesTo = 'PROCESSED';
        break;
      case 'reopen':
        bill.status = 'PENDING';
        break;
      case 'refund':
        bill.status = 'REFUNDED';
        break;
    }
    bill.updatedAt = at;
    const journalEntry: SettloJournalEntry = {
      seq: this.journalEntries.length + 1,
      at,
      tenant: bill.tenant,
      billNo,
      action,
      identity: actor.identity,
      sessionId: actor.sessionId,
      via: 'ui',
      detail: { before, after: snapshotOf(bill), ...change.detail },
    };
    this.journalEntries.push(journalEntry);
    if (settlesTo !== undefined) {
      const target = settlesTo;
      const settle = () => {
        bill.status = target;
        bill.updatedAt = new Date().toISOString();
        entry.timer = undefined;
      };
      if (change.settleDelayMs <= 0) settle();
      else {
        entry.timer = setTimeout(settle, change.settleDelayMs);
        entry.timer.unref();
      }
    }
    return journalEntry;
  }

  dispose(): void {
    for (const entry of this.ordered) if (entry.timer) clearTimeout(entry.timer);
  }
}
