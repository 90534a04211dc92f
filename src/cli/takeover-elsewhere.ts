import { ListTablesCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { WiredServices } from '../composition/services.js';

/**
 * A data folder's takeover queues read with another config's tables: `takeover list` must never print an empty
 * queue that is not empty. The folder's config check (data-folder.ts) cannot cover a folder that has no record of
 * its config, so an empty answer is checked against the folder itself: every `<prefix>-takeover` table it holds
 * besides the one this config reads, with the items in it. Local folders only (one stack, a handful of tables).
 */
export interface QueueElsewhere {
  prefix: string;
  open: number;
  all: number;
}

const SUFFIX = '-takeover';

export async function takeoverQueuesElsewhere(s: WiredServices): Promise<QueueElsewhere[]> {
  // The document client sends plain DynamoDB commands too; it is the only client the services hold.
  const db = s.clients.db as unknown as DynamoDBClient;
  const mine = `${s.config.prefix}${SUFFIX}`;
  const tables: string[] = [];
  let start: string | undefined;
  do {
    const page = await db.send(new ListTablesCommand({ ...(start ? { ExclusiveStartTableName: start } : {}) }));
    tables.push(...(page.TableNames ?? []));
    start = page.LastEvaluatedTableName;
  } while (start);
  const found: QueueElsewhere[] = [];
  for (const table of tables.filter((t) => t.endsWith(SUFFIX) && t !== mine)) {
    const count = async (open: boolean) => {
      let total = 0;
      let key: Record<string, unknown> | undefined;
      do {
        const page = await db.send(
          new ScanCommand({
            TableName: table,
            Select: 'COUNT',
            ...(open
              ? {
                  FilterExpression: '#s = :open',
                  ExpressionAttributeNames: { '#s': 'status' },
                  ExpressionAttributeValues: { ':open': { S: 'OPEN' } },
                }
              : {}),
            ...(key ? { ExclusiveStartKey: key as never } : {}),
          }),
        );
        total += page.Count ?? 0;
        key = page.LastEvaluatedKey;
      } while (key);
      return total;
    };
    const all = await count(false);
    if (all > 0) found.push({ prefix: table.slice(0, -SUFFIX.length), open: await count(true), all });
  }
  return found;
}

/** The refusal's text: which prefixes hold items, and the fix. */
export function describeElsewhere(found: readonly QueueElsewhere[], prefix: string, dataDir: string): string {
  const held = found.map((q) => `prefix "${q.prefix}" (${q.open} open, ${q.all} in all)`).join(', ');
  return (
    `this config reads prefix "${prefix}", which holds no takeover items in ${dataDir}, but the folder's takeover queue ` +
    `is under ${held}; pass --config with the config of that prefix (never read as an empty queue)`
  );
}
