import type { BillKind, BillStatus } from './schemas.js';

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

/** 1234.5 yuan as `1234.50`, the way the refund confirmation asks for it and the export writes it. */
export function plainYuan(amountCents: number): string {
  return `${Math.floor(amountCents / 100)}.${(amountCents % 100).toString().padStart(2, '0')}`;
}

/** Beijing time, `2026-11-03 14:22:10`. */
export function beijingTime(iso: string): string {
  return new Date(Date.parse(iso) + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}
