import type { BillKind, BillStatus } from './schemas.js';

export { beijingTime, plainYuan } from '../kit/yuan.js';

/** The words the pages, the grid and the export use. */
export const STATUS_TEXT: Record<BillStatus, string> = {
  PENDING: '待处理',
  PROCESSING: '处理中',
  PROCESSED: '已处理',
  REFUNDED: '已退款',
};

export const KIND_TEXT: Record<BillKind, string> = {
  mismatch: '金额差异',
  overcharge: '多收款',
};

/** 1234.5 yuan as `1,234.50`, the way the portal shows amounts. */
export function yuanText(amountCents: number): string {
  const yuan = Math.floor(amountCents / 100).toLocaleString('en-US');
  return `${yuan}.${(amountCents % 100).toString().padStart(2, '0')}`;
}
