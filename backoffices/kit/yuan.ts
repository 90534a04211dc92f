/** Amounts as the back offices' refund fields take them (yuan with two decimals, kept as cents), and times as the Chinese ones show them. */

/** 123450 -> 1234.50, the form the refund field expects. */
export function plainYuan(amountCents: number): string {
  return `${Math.floor(amountCents / 100)}.${(amountCents % 100).toString().padStart(2, '0')}`;
}

/**
 * Parses what an operator types into the refund amount field: digits with at
 * most two decimals, no separators. Returns cents, or null when malformed.
 */
export function parseYuan(text: string): number | null {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** Beijing time, `2026-11-03 14:22:10`: the vendors are in China. */
export function beijingTime(iso: string): string {
  return new Date(Date.parse(iso) + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}
