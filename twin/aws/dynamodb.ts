import { mkdirSync } from 'node:fs';
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type DynamoDBClient,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { TABLES, tableName, type TableDefinition } from '../../src/contracts/table-definitions.js';
import { closeServer, listen, LOCAL_HOST } from '../../src/http/listen.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopOnce } from './stop-once.js';

export interface LocalDynamoDbOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** LevelDB folder; omitted means in memory. */
  path?: string;
}

export interface LocalDynamoDb {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts dynalite in this process on 127.0.0.1. */
export async function startLocalDynamoDb(options: LocalDynamoDbOptions = {}): Promise<LocalDynamoDb> {
  if (options.path) mkdirSync(options.path, { recursive: true });
  // Tables become ACTIVE on the next tick instead of after dynalite's default 500 ms.
  const server = dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const port = await listen(server, options.port ?? 0);
  return {
    endpoint: `http://${LOCAL_HOST}:${port}`,
    port,
    // dynalite's close() also closes LevelDB, releasing its LOCK file for the next start.
    stop: stopOnce(() => closeServer(server)),
  };
}

export interface CreateTablesResult {
  created: string[];
  existing: string[];
  /** Tables whose TTL attribute could not be enabled because dynalite lacks UpdateTimeToLive. */
  ttlUnsupported: string[];
}

/** Creates every table in TABLES (idempotent: tables that exist are left as they are). */
export async function createTables(client: DynamoDBClient, prefix: string): Promise<CreateTablesResult> {
  const result: CreateTablesResult = { created: [], existing: [], ttlUnsupported: [] };
  for (const table of TABLES) {
    const name = tableName(prefix, table.id);
    const existing = await describedIndexes(client, name);
    if (existing) {
      // dynalite cannot add an index to a table: a data folder from an older layout is refused by name, not met later
      // by a query that fails on an index that is not there.
      const missing = table.indexes.filter((i) => !existing.includes(i.name)).map((i) => i.name);
      if (missing.length > 0)
        throw new Error(
          `table ${name} in this data folder has no index ${missing.join(', ')} (it was created by an older version); ` +
            'remove the data folder (or use another --data-dir) and start again',
        );
      result.existing.push(name);
      continue;
    }
    try {
      await client.send(new CreateTableCommand(createTableInput(name, table)));
      result.created.push(name);
    } catch (err) {
      // Another process created it between our check and our create.
      if (!(err instanceof ResourceInUseException)) throw err;
      result.existing.push(name);
      continue;
    }
    await waitUntilActive(client, name);
    if (table.ttlAttribute && !(await enableTtl(client, name, table.ttlAttribute))) {
      result.ttlUnsupported.push(name);
    }
  }
  return result;
}

export function createTableInput(name: string, table: TableDefinition) {
  const attributes = new Map<string, 'S' | 'N'>();
  const keySchema = (pk: TableDefinition['partitionKey'], sk?: TableDefinition['sortKey']): KeySchemaElement[] => {
    for (const key of [pk, sk]) {
      if (!key) continue;
      const known = attributes.get(key.name);
      if (known && known !== key.type) {
        throw new Error(`table ${table.id}: attribute "${key.name}" is declared as both ${known} and ${key.type}; use one type`);
      }
      attributes.set(key.name, key.type);
    }
    return [{ AttributeName: pk.name, KeyType: 'HASH' }, ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : [])];
  };
  const tableKeys = keySchema(table.partitionKey, table.sortKey);
  const indexes = table.indexes.map((index) => ({
    IndexName: index.name,
    KeySchema: keySchema(index.partitionKey, index.sortKey),
    Projection: { ProjectionType: 'ALL' as const },
  }));
  const attributeDefinitions: AttributeDefinition[] = [...attributes].map(([AttributeName, AttributeType]) => ({
    AttributeName,
    AttributeType,
  }));
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST' as const,
    KeySchema: tableKeys,
    AttributeDefinitions: attributeDefinitions,
    ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
  };
}

/** The names of the table's global secondary indexes; undefined when there is no such table. */
async function describedIndexes(client: DynamoDBClient, name: string): Promise<string[] | undefined> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    return (Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName ?? '');
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return undefined;
    throw err;
  }
}

async function waitUntilActive(client: DynamoDBClient, name: string): Promise<void> {
  // The SDK waiter sleeps 20 s between polls; dynalite is ACTIVE within milliseconds.
  for (let attempt = 0; attempt < 500; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    await sleep(10);
  }
  throw new Error(`table ${name} did not become ACTIVE within 5 s`);
}

/** Returns false when the server does not implement UpdateTimeToLive (dynalite 4 does not). */
async function enableTtl(client: DynamoDBClient, name: string, attribute: string): Promise<boolean> {
  try {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }),
    );
    return true;
  } catch (err) {
    if (/UnknownOperation/.test((err as Error).name)) return false;
    throw err;
  }
}
