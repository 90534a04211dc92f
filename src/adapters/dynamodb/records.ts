import type { z } from 'zod';

/**
 * Items read from DynamoDB are parsed with the record's schema (src/app/ports), never cast: an item of another
 * shape (an older writer, a hand edit, a wrong table) fails here, naming the table, the item and the field,
 * instead of travelling on as a claim or an approval it is not.
 */
export function parseRecord<S extends z.ZodType>(schema: S, item: Record<string, unknown> | undefined, table: string): z.output<S> {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || '(item)';
  const key = item && typeof item === 'object' ? describeKey(item) : 'an empty item';
  throw new Error(`${table}: ${key} is not a stored record of this table: ${field}: ${issue?.message ?? 'invalid'}`);
}

export function parseRecords<S extends z.ZodType>(
  schema: S,
  items: readonly Record<string, unknown>[] | undefined,
  table: string,
): z.output<S>[] {
  return (items ?? []).map((item) => parseRecord(schema, item, table));
}

/** The item's key attributes, as far as the tables name them, for the error. */
function describeKey(item: Record<string, unknown>): string {
  const parts = ['key', 'approvalId', 'chain', 'seq']
    .filter((name) => item[name] !== undefined)
    .map((name) => `${name}=${String(item[name])}`);
  return parts.length > 0 ? `item ${parts.join(' ')}` : 'an item without key attributes';
}
