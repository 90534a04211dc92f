import { GetCommand, PutCommand, paginateQuery, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { writeIfConditionHolds } from './conditional-write.js';
import {
  TakeoverEntry,
  type NewTakeoverEntry,
  type OpenResult,
  type TakeoverPort,
  type TakeoverResolution,
  type TakeoverRound,
  type TakeoverStatus,
} from '../../app/ports/takeovers.js';
import { parseRecord, parseRecords } from './records.js';

/** The human takeover queue in DynamoDB. Every state change is a conditional write, so two operators cannot both resolve one item. */
export class TakeoverStore implements TakeoverPort {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Puts an item in the queue. Idempotent per execution: the same run
   * re-entering changes nothing; a later run on a resolved entry reopens it.
   */
  async open(input: NewTakeoverEntry, now = new Date().toISOString()): Promise<OpenResult> {
    const fresh: TakeoverEntry = {
      ...input,
      status: 'OPEN',
      round: 1,
      createdAt: now,
      firstOpenedAt: now,
      updatedAt: now,
      history: [],
      notified: [],
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      const created = await writeIfConditionHolds(() =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: fresh,
            ConditionExpression: 'attribute_not_exists(#k)',
            ExpressionAttributeNames: { '#k': 'key' },
          }),
        ),
      );
      if (created) return { change: 'opened', entry: fresh };
      const existing = await this.get(input.key);
      if (!existing) continue;
      if (existing.executionArn === input.executionArn || existing.status === 'OPEN') return { change: 'unchanged', entry: existing };
      const previous: TakeoverRound = {
        round: existing.round,
        openedAt: existing.createdAt,
        reason: existing.reason,
        ...(existing.known ? { known: existing.known } : {}),
        errorName: existing.errorName,
        executionArn: existing.executionArn,
        ...(existing.resolution ? { resolution: existing.resolution } : {}),
      };
      const reopened: TakeoverEntry = {
        ...existing,
        ...input,
        status: 'OPEN',
        round: existing.round + 1,
        createdAt: now,
        updatedAt: now,
        history: [...existing.history, previous],
        notified: [],
      };
      delete reopened.resolution;
      delete reopened.notifiedAt;
      delete reopened.notifyError;
      const reopenedNow = await writeIfConditionHolds(() =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: reopened,
            ConditionExpression: '#s = :resolved AND #r = :round',
            ExpressionAttributeNames: { '#s': 'status', '#r': 'round' },
            ExpressionAttributeValues: { ':resolved': 'RESOLVED', ':round': existing.round },
          }),
        ),
      );
      if (reopenedNow) return { change: 'reopened', entry: reopened };
    }
    throw new Error(`takeover entry ${input.key} kept changing while it was being opened`);
  }

  async get(key: string): Promise<TakeoverEntry | undefined> {
    const result = await this.db.send(new GetCommand({ TableName: this.table, Key: { key }, ConsistentRead: true }));
    return result.Item && parseRecord(TakeoverEntry, result.Item, this.table);
  }

  /** Entries with a status, oldest first (the byStatus index), optionally of one tenant. */
  async list(status: TakeoverStatus, tenant?: string): Promise<TakeoverEntry[]> {
    const entries: TakeoverEntry[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: 'byStatus',
        KeyConditionExpression: '#s = :s',
        ...(tenant ? { FilterExpression: 'tenant = :t' } : {}),
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': status, ...(tenant ? { ':t': tenant } : {}) },
      },
    );
    for await (const page of pages) entries.push(...parseRecords(TakeoverEntry, page.Items, this.table));
    return entries;
  }

  /** OPEN -> RESOLVED for the given round; undefined if someone else resolved it first. */
  async resolve(key: string, round: number, resolution: TakeoverResolution): Promise<TakeoverEntry | undefined> {
    return this.conditionalUpdate(key, 'SET #s = :resolved, resolution = :res, updatedAt = :now', '#s = :open AND #r = :round', {
      ':resolved': 'RESOLVED',
      ':open': 'OPEN',
      ':round': round,
      ':res': resolution,
      ':now': resolution.at,
    });
  }

  /** Undoes a resolution whose action could not be carried out (the item is the operators' again). */
  async reopenUnresolved(key: string, round: number): Promise<TakeoverEntry | undefined> {
    return this.conditionalUpdate(key, 'SET #s = :open, updatedAt = :now REMOVE resolution', '#s = :resolved AND #r = :round', {
      ':resolved': 'RESOLVED',
      ':open': 'OPEN',
      ':round': round,
      ':now': new Date().toISOString(),
    });
  }

  /** Records how an operator's retry ended, unless the entry moved on (reopened) meanwhile. */
  async recordRetryOutcome(key: string, round: number, outcome: string, reason: string | undefined): Promise<TakeoverEntry | undefined> {
    return this.conditionalUpdate(
      key,
      'SET resolution.retryOutcome = :o, resolution.retryReason = :why, updatedAt = :now',
      '#s = :resolved AND #r = :round',
      { ':resolved': 'RESOLVED', ':round': round, ':o': outcome, ':why': reason ?? null, ':now': new Date().toISOString() },
    );
  }

  async recordNotification(key: string, round: number, notified: string[], error?: string): Promise<void> {
    await this.conditionalUpdate(key, 'SET notified = :n, notifiedAt = :now, notifyError = :e', '#r = :round', {
      ':round': round,
      ':n': notified,
      ':now': new Date().toISOString(),
      ':e': error ?? null,
    });
  }

  private async conditionalUpdate(
    key: string,
    update: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<TakeoverEntry | undefined> {
    const names: Record<string, string> = {};
    if (update.includes('#s') || condition.includes('#s')) names['#s'] = 'status';
    if (condition.includes('#r')) names['#r'] = 'round';
    const result = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key },
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(#k) AND ${condition}`,
          ExpressionAttributeNames: { ...names, '#k': 'key' },
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result ? parseRecord(TakeoverEntry, result.Attributes, this.table) : undefined;
  }
}
