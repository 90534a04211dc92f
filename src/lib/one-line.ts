/**
 * Renders a free-text value (a requester, an amount, a note, a vendor message)
 * for a mail, a page or a log as one bounded line of data: line breaks,
 * controls and bidirectional overrides are shown as visible escapes instead of
 * starting a new line or reordering the text around them, and anything past
 * `max` characters is cut with an ellipsis. Input validation already refuses
 * such values where it can; this is the last guard where text is shown.
 */
const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

export function oneLine(value: unknown, max = 200): string {
  const text = (value === undefined || value === null ? '' : String(value)).replace(
    UNSAFE,
    (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`,
  );
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
