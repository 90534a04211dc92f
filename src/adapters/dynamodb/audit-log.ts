import { z } from 'zod';
import { paginateQuery, paginateScan, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GENESIS_HASH, sealEvent, type AuditEvent } from '../../domain/audit-chain.js';
import { checkAuditEventInput, type AuditEventInput } from '../../domain/audit-events.js';
import { AuditEventRecord, type AuditPort } from '../../app/ports/audit.js';
import { parseRecord, parseRecords } from './records.js';
import { writeIfConditionHolds } from './conditional-write.js';
import { invocationMemo } from '../../lib/invocation-memo.js';

/** The heads of the chains the running step invocation read or appended to (src/lib/invocation-memo.ts). */
const HEADS_MEMO = 'audit-heads';

/** The projection chainsStartingWith reads: only the chain's name. */
const ChainName = z.object({ chain: z.string() });

/**
 * Append-only, hash-chained audit events; a conditional put keeps each chain linear. Only the audit event union
 * (src/domain/audit-events.ts) is appended: each event is checked before anything is read or written, and stored
 * exactly as given (the check never alters what is hashed).
 */
export class AuditLog implements AuditPort {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Appends after the chain's head. Within one step invocation the head this invocation last read or wrote is tried
   * first, without reading it again: the conditional put refuses it when another writer appended since (its `seq`
   * is taken), and then the head is read as always. An event, once stored, never changes, so a head that is still
   * the latest is exactly what a fresh read would return.
   */
  async append(chain: string, input: AuditEventInput): Promise<AuditEvent> {
    checkAuditEventInput(input);
    const heads = invocationMemo<AuditEvent | undefined>(HEADS_MEMO);
    for (let attempt = 0; attempt < 10; attempt++) {
      // A refused put forgets the head (appendAfter), so a retry reads it again.
      const last = heads?.has(chain) ? heads.get(chain) : await this.last(chain);
      const appended = await this.appendAfter(chain, last, input);
      if (appended) return appended;
    }
    throw new Error(`audit chain ${chain} is contended; gave up appending ${input.type}`);
  }

  /**
   * Appends only if `after` is still the chain's latest event (undefined: the chain is empty); undefined when
   * another append came first. For a writer whose event depends on what the head said (a batch's later seals,
   * each building on the batch page the previous one recorded).
   */
  async appendAfter(chain: string, after: AuditEvent | undefined, input: AuditEventInput): Promise<AuditEvent | undefined> {
    checkAuditEventInput(input);
    const event = sealEvent(chain, (after?.seq ?? 0) + 1, after?.hash ?? GENESIS_HASH, input);
    const put = await writeIfConditionHolds(() =>
      this.db.send(new PutCommand({ TableName: this.table, Item: event, ConditionExpression: 'attribute_not_exists(seq)' })),
    );
    const heads = invocationMemo<AuditEvent | undefined>(HEADS_MEMO);
    if (put) heads?.set(chain, event);
    else heads?.delete(chain);
    return put ? event : undefined;
  }

  /** The chain's latest event, in one query; undefined for an empty chain. */
  head(chain: string): Promise<AuditEvent | undefined> {
    return this.last(chain);
  }

  /** The names of the chains that begin with `prefix` (a scan over first events: for audits and reports, never on a write path). */
  async chainsStartingWith(prefix: string): Promise<string[]> {
    const chains: string[] = [];
    const pages = paginateScan(
      { client: this.db },
      {
        TableName: this.table,
        ProjectionExpression: 'chain',
        FilterExpression: 'begins_with(chain, :b) AND seq = :one',
        ExpressionAttributeValues: { ':b': prefix, ':one': 1 },
      },
    );
    for await (const page of pages) for (const item of parseRecords(ChainName, page.Items, this.table)) chains.push(item.chain);
    return chains;
  }

  async events(chain: string): Promise<AuditEvent[]> {
    const events: AuditEvent[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        KeyConditionExpression: 'chain = :c',
        ExpressionAttributeValues: { ':c': chain },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) events.push(...parseRecords(AuditEventRecord, page.Items, this.table));
    invocationMemo<AuditEvent | undefined>(HEADS_MEMO)?.set(chain, events.at(-1));
    return events;
  }

  private async last(chain: string): Promise<AuditEvent | undefined> {
    const page = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'chain = :c',
        ExpressionAttributeValues: { ':c': chain },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = page.Items?.[0];
    const last = item && parseRecord(AuditEventRecord, item, this.table);
    invocationMemo<AuditEvent | undefined>(HEADS_MEMO)?.set(chain, last);
    return last;
  }
}
