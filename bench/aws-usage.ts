import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SESv2Client } from '@aws-sdk/client-sesv2';

/**
 * Counts the billable AWS requests Paperclip makes, by watching its own SDK
 * clients (middleware on the clients the services were built with; nothing is
 * replaced). DynamoDB requests ask for ReturnConsumedCapacity so the units are
 * the ones DynamoDB would charge for the base table; a conditional write that
 * fails is still charged one write unit.
 */

const DYNAMO_READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'GetCommand', 'BatchGetCommand']);
const DYNAMO_WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'PutCommand',
  'UpdateCommand',
  'DeleteCommand',
  'BatchWriteCommand',
]);

export interface TableUsage {
  reads: number;
  writes: number;
  readUnits: number;
  writeUnits: number;
  failedConditionalWrites: number;
}

export interface AwsUsageSnapshot {
  dynamodb: {
    requests: number;
    readUnits: number;
    writeUnits: number;
    byTable: Record<string, TableUsage>;
    byOperation: Record<string, number>;
  };
  s3: { puts: number; putBytes: number; gets: number; lists: number; other: number };
  ses: { emails: number };
}

type Middleware = (next: (args: any) => Promise<any>, context: any) => (args: any) => Promise<any>;
interface HasStack {
  middlewareStack: {
    add(mw: Middleware, options: { step: 'initialize'; name: string; priority?: 'high' | 'low' | 'normal' }): void;
    remove(name: string): boolean;
  };
}

function empty(): AwsUsageSnapshot {
  return {
    dynamodb: { requests: 0, readUnits: 0, writeUnits: 0, byTable: {}, byOperation: {} },
    s3: { puts: 0, putBytes: 0, gets: 0, lists: 0, other: 0 },
    ses: { emails: 0 },
  };
}

function bodyBytes(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
}

function capacityUnits(consumed: unknown): number | undefined {
  if (!consumed) return undefined;
  const list = Array.isArray(consumed) ? consumed : [consumed];
  return list.reduce((total: number, c: { CapacityUnits?: number }) => total + (c?.CapacityUnits ?? 0), 0);
}

export class AwsUsage {
  private usage = empty();
  private readonly names: Array<[HasStack, string]> = [];

  constructor(clients: { db: DynamoDBDocumentClient; s3: S3Client; ses: SESv2Client }) {
    const db = clients.db as unknown as HasStack;
    db.middlewareStack.add((next, context) => async (args) => this.dynamo(next, context, args), {
      step: 'initialize',
      name: 'benchDynamoUsage',
      priority: 'high',
    });
    this.names.push([db, 'benchDynamoUsage']);
    const s3 = clients.s3 as unknown as HasStack;
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName ?? '');
        if (command === 'PutObjectCommand') {
          this.usage.s3.puts += 1;
          this.usage.s3.putBytes += bodyBytes(args.input?.Body);
        } else if (command === 'GetObjectCommand' || command === 'HeadObjectCommand') this.usage.s3.gets += 1;
        else if (command.startsWith('ListObjects')) this.usage.s3.lists += 1;
        else this.usage.s3.other += 1;
        return next(args);
      },
      { step: 'initialize', name: 'benchS3Usage', priority: 'high' },
    );
    this.names.push([s3, 'benchS3Usage']);
    const ses = clients.ses as unknown as HasStack;
    ses.middlewareStack.add(
      (next, context) => async (args) => {
        if (String(context.commandName ?? '').startsWith('SendEmail')) {
          const d = args.input?.Destination ?? {};
          this.usage.ses.emails +=
            [d.ToAddresses, d.CcAddresses, d.BccAddresses].reduce((n: number, l: unknown[] | undefined) => n + (l?.length ?? 0), 0) || 1;
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchSesUsage', priority: 'high' },
    );
    this.names.push([ses, 'benchSesUsage']);
  }

  private async dynamo(next: (args: any) => Promise<any>, context: any, args: any): Promise<any> {
    const command = String(context.commandName ?? '');
    const isRead = DYNAMO_READS.has(command);
    const isWrite = DYNAMO_WRITES.has(command);
    const table = String(args.input?.TableName ?? Object.keys(args.input?.RequestItems ?? {})[0] ?? '?');
    const d = this.usage.dynamodb;
    d.requests += 1;
    d.byOperation[command] = (d.byOperation[command] ?? 0) + 1;
    const t = d.byTable[table] ?? { reads: 0, writes: 0, readUnits: 0, writeUnits: 0, failedConditionalWrites: 0 };
    d.byTable[table] = t;
    if (isRead) t.reads += 1;
    if (isWrite) t.writes += 1;
    const input = isRead || isWrite ? { ...args.input, ReturnConsumedCapacity: 'TOTAL' } : args.input;
    try {
      const result = await next({ ...args, input });
      const units = capacityUnits(result?.output?.ConsumedCapacity) ?? (isRead || isWrite ? 1 : 0);
      if (isRead) {
        t.readUnits += units;
        d.readUnits += units;
      } else if (isWrite) {
        t.writeUnits += units;
        d.writeUnits += units;
      }
      return result;
    } catch (error) {
      if (isWrite && (error as { name?: string }).name === 'ConditionalCheckFailedException') {
        t.failedConditionalWrites += 1;
        t.writeUnits += 1;
        d.writeUnits += 1;
      }
      throw error;
    }
  }

  reset(): void {
    this.usage = empty();
  }

  snapshot(): AwsUsageSnapshot {
    return structuredClone(this.usage);
  }

  detach(): void {
    for (const [client, name] of this.names) client.middlewareStack.remove(name);
  }
}
