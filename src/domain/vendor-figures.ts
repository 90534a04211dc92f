import { parseAmount, showAmount, type DecimalSeparator } from './amount.js';

/**
 * The vendor's own figures: values a site pack names for an action (`approval.show`), read from the vendor during
 * the pre-state read, never from the task. The approver is shown them beside the task's parameters, and a typed
 * parameter the pack ties to one of them (`confirm: { param, equals }`) must equal it before anyone is asked.
 */

/** A figure's name → the text the vendor shows for it ("¥1,280.00"), as read. */
export type VendorFigures = Record<string, string>;

/** What the pack declares: the task parameter `param` must equal the vendor's figure `equals`, as an amount in cents. */
export interface ConfirmRule {
  param: string;
  equals: string;
}

export type ConfirmVerdict =
  | { kind: 'match'; cents: bigint }
  /** The task does not give the (optional) parameter: nothing to compare. */
  | { kind: 'not_given' }
  /** The task's value is not the vendor's, or is no amount at all: the item is refused before the approval. */
  | { kind: 'mismatch'; message: string }
  /** The vendor's figure is missing or no amount: the pack does not read what it says it reads. */
  | { kind: 'unreadable'; message: string };

/** The currency mark the vendor wrote its figure with, so the task's value is shown the same way ("$", "¥", or none). */
function currencyOf(text: string): string {
  const mark = /[¥￥$€£]/u.exec(text);
  return mark ? mark[0] : '';
}

/**
 * Compares the task's typed parameter with the vendor's figure, in exact cents (`parseAmount`, with the pack's decimal
 * separator for the vendor's text; a task parameter is always a plain decimal). `where` names the pack line in the
 * message (`actions.refund.confirm`), so the reason says which declaration refused the item.
 */
export function compareConfirm(input: {
  rule: ConfirmRule;
  params: Readonly<Record<string, string>>;
  figures: Readonly<VendorFigures>;
  where: string;
  decimal?: DecimalSeparator;
}): ConfirmVerdict {
  const { rule, params, figures, where } = input;
  const given = Object.hasOwn(params, rule.param) ? params[rule.param] : undefined;
  if (given === undefined || given.trim() === '') return { kind: 'not_given' };
  const shown = Object.hasOwn(figures, rule.equals) ? figures[rule.equals] : undefined;
  if (shown === undefined) {
    return { kind: 'unreadable', message: `the vendor's ${rule.equals} was not read (${where}: name a figure the pre-state read reads)` };
  }
  const vendor = parseAmount(shown, input.decimal ?? '.');
  if (!vendor) {
    return {
      kind: 'unreadable',
      message: `the vendor's ${rule.equals} ${JSON.stringify(shown)} is not an amount (${where}: read a field that shows the amount, or narrow it with regex)`,
    };
  }
  const currency = currencyOf(shown);
  const task = parseAmount(given, '.');
  if (!task) {
    return {
      kind: 'mismatch',
      message: `the task's ${rule.param} ${JSON.stringify(given)} is not an amount; the vendor's ${rule.equals} is ${showAmount(vendor, currency)} (${where})`,
    };
  }
  if (task.cents !== vendor.cents) {
    return {
      kind: 'mismatch',
      message: `the task's ${rule.param} ${showAmount(task, currency)} is not the vendor's ${showAmount(vendor, currency)} (${where})`,
    };
  }
  return { kind: 'match', cents: vendor.cents };
}
