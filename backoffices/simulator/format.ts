import type { BillKind, BillStatus } from './schemas.js';

/** The vendor is in China: pages show Beijing time. */
export { beijingTime as formatBeijingTime, parseYuan, plainYuan } from '../kit/yuan.js';

export const STATUS_LABELS: Record<BillStatus, string> = {
  PENDING: '待处理',
  PROCESSING: '处理中',
  PROCESSED: '已处理',
  REFUNDED: '已退款',
};

export const KIND_LABELS: Record<BillKind, string> = {
  mismatch: '金额不符',
  overcharge: '重复扣款',
};

export const ACTION_LABELS: Record<string, string> = {
  mark: '标记处理',
  unmark: '撤销处理',
  refund: '退款',
  note: '备注',
};

/** 123450 -> ¥1,234.50 */
export function formatYuan(amountCents: number): string {
  const sign = amountCents < 0 ? '-' : '';
  const abs = Math.abs(amountCents);
  const yuan = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}¥${yuan}.${(abs % 100).toString().padStart(2, '0')}`;
}
