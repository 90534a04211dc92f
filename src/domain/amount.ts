/**
 * Money amounts as back offices show them — "1,234.50", "1.234,50", "¥1,234.50",
 * "1 234,50 €", "(12.00)" — read into exact cents, so that every place that
 * compares or passes on an amount (a refund of exactly the listed amount, the
 * approver sign-in threshold) reads it the same way. No floating point: 0.1 + 0.2
 * is not an amount.
 *
 * Deliberately strict: an amount that could mean two things ("1,234" where the
 * comma might be the decimal separator, or grouping that is not in threes) is not
 * an amount, and the callers treat that as "cannot be read" rather than guess.
 */

/** The decimal separator a pack declares for the amounts its pages show (`list.decimal`). */
export const DECIMAL_SEPARATORS = ['.', ','] as const;
export type DecimalSeparator = (typeof DECIMAL_SEPARATORS)[number];

export interface Amount {
  /** Exact value in hundredths (cents, fen); negative for a debit or credit note. */
  cents: bigint;
  /**
   * The same value as a plain decimal, the way an action parameter takes it: an optional
   * minus, digits without grouping, and the fraction digits as shown ("1234.5" stays 1 digit).
   */
  plain: string;
}

/** Currency marks that may stand before or after the number; they carry no value. */
const CURRENCY = /^(?:[¥￥$€£]|CNY|RMB|USD|EUR|GBP|元)/u;
const CURRENCY_END = /(?:[¥￥$€£]|CNY|RMB|USD|EUR|GBP|元)$/u;

/** Grouping marks besides the other separator: spaces (also no-break and narrow no-break) and the Swiss apostrophe. */
const SPACES = /[\s\u00a0\u202f]/gu;

function stripCurrency(text: string): string {
  return text.replace(CURRENCY, '').replace(CURRENCY_END, '').trim();
}

/** Reads an amount; undefined when the text is not one (see the top of this file for what counts). */
export function parseAmount(text: string, decimal: DecimalSeparator = '.'): Amount | undefined {
  let rest = text.trim();
  let negative = false;
  // Accounting negatives: the whole amount in parentheses, currency inside or outside.
  const parenthesised = /^(\S*?)\s*\((.*)\)\s*(\S*)$/u.exec(rest);
  if (parenthesised) {
    negative = true;
    rest = `${parenthesised[1]}${parenthesised[2]}${parenthesised[3]}`.trim();
  }
  rest = stripCurrency(rest);
  const sign = /^([-+\u2212])\s*/u.exec(rest);
  if (sign) {
    if (negative && sign[1] !== '+') return undefined;
    negative = sign[1] !== '+';
    rest = stripCurrency(rest.slice(sign[0].length));
  }
  const grouping = decimal === '.' ? ',' : '.';
  const [whole = '', fraction, extra] = rest.split(decimal);
  if (extra !== undefined || (fraction !== undefined && !/^\d{1,2}$/.test(fraction))) return undefined;
  const grouped = whole.replace(SPACES, grouping).replace(/'/g, grouping);
  const digits = grouped.includes(grouping) ? groupedDigits(grouped, grouping) : /^\d+$/.test(grouped) ? grouped : undefined;
  if (digits === undefined || digits.length > 15) return undefined;
  const cents = BigInt(digits) * 100n + BigInt((fraction ?? '').padEnd(2, '0'));
  const integer = digits.replace(/^0+(?=\d)/, '');
  const zero = cents === 0n;
  return {
    cents: negative && !zero ? -cents : cents,
    plain: `${negative && !zero ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  };
}

/** "1,234,567" with its grouping separator: the digits, or undefined unless grouped in threes. */
function groupedDigits(text: string, separator: string): string | undefined {
  const groups = text.split(separator);
  const [first = '', ...others] = groups;
  if (!/^\d{1,3}$/.test(first) || others.some((g) => !/^\d{3}$/.test(g))) return undefined;
  return groups.join('');
}

/** ¥1,234.50 (and -¥12.00): an amount for people to read, in the approval pages and emails. */
export function showAmount(amount: Amount, currency = '¥'): string {
  const magnitude = amount.cents < 0n ? -amount.cents : amount.cents;
  const whole = (magnitude / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = (magnitude % 100n).toString().padStart(2, '0');
  return `${amount.cents < 0n ? '-' : ''}${currency}${whole}.${fraction}`;
}
