import { JournaledBook, type Actor, type Refusal, type UiWrite } from '../kit/journaled-book.js';
import type { Bill, BillStatus, SettloAction, SettloJournalEntry } from './schemas.js';

export type { Actor, Refusal };

function snapshotOf(bill: Bill) {
  return { status: bill.status, note: bill.note };
}

/**
 * The bills and the ground-truth journal: one entry per committed mutation, with the bill's state before and
 * after. 处理 (settle) moves a pending mismatch to 处理中 (PROCESSING) and, after the review delay, to 已处理;
 * 撤回 (reopen) puts it back to 待处理; 退款 (refund) refunds an overcharge at once.
 */
export class BillBook extends JournaledBook<Bill, BillStatus, SettloJournalEntry> {
  constructor(bills: Bill[]) {
    super(bills, { id: (b) => b.billNo, tenant: (b) => b.tenant, noun: 'bill' });
  }

  protected settled(bill: Bill, to: BillStatus): void {
    bill.status = to;
    bill.updatedAt = new Date().toISOString();
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

  /** Applies an accepted write (a 处理 with its note); a 处理 settles to 已处理 after the delay. */
  commit(write: UiWrite<SettloAction> & { note?: string }): SettloJournalEntry {
    return this.commitUiWrite(write, snapshotOf, (bill) => {
      switch (write.action) {
        case 'settle':
          bill.status = 'PROCESSING';
          bill.note = write.note ?? null;
          return 'PROCESSED';
        case 'reopen':
          bill.status = 'PENDING';
          return undefined;
        case 'refund':
          bill.status = 'REFUNDED';
          return undefined;
      }
    });
  }
}
