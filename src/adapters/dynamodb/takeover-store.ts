import type { WriteIdentity } from '../../domain/claim.js';
import { GetCommand, PutCommand, paginateQuery, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { writeIfConditionHolds } from './conditional-write.js';

export type TakeoverStatus = 'OPEN' | 'RESOLVED';
export const RESOLUTIONS = ['done', 'retry', 'abandon'] as const;
export type ResolutionKind = (typeof RESOLUTIONS)[number];

export interface TakeoverResolution {
  as: ResolutionKind;
  operator: string;
  note: string;
  at: string;
  /** retry: the guarded-write execution that re-runs the item (readback first). */
  retryExecutionArn?: string;
  /** retry: that execution's outcome, once it finished. */
  retryOutcome?: string;
  retryReason?: string;
}

/** One round in the queue: the item was handed to people, and (maybe) how they answered. */
export interface TakeoverRound {
  round: number;
  openedAt: string;
  reason: string;
  errorName: string | null;
  executionArn: string;
  resolution?: TakeoverResolution;
}

/**
 * An item the machine refused to decide. One entry per idempotency key; a key
 * that comes back after an operator's retry reopens its entry (round + 1) and
 * keeps the earlier rounds in `history`.
 */
export interface TakeoverEntry extends WriteIdentity {
  reason: string;
  errorName: string | null;
  /** The tool-ladder tier the item reached (api, browser, visual). */
  tier: string;
  /** How far the guarded path got before it stopped. */
  stage: string;
  /** True when a readback had to fall to a lower source because the structured contract was missing. */
  degraded: boolean;
  /** Evidence object keys in the evidence bucket. */
  evidence: string[];
  evidenceBucket: string;
  executionArn: string;
  /** The claim's fencing version when it went to takeover. */
  claimVersion: number;
  status: TakeoverStatus;
  round: number;
  /** When this round opened; the byStatus index sorts on it. */
  createdAt: string;
  firstOpenedAt: string;
  updatedAt: string;
  resolution?: TakeoverResolution;
  history: TakeoverRound[];
  notified: string[];
  notifiedAt?: string;
  notifyError?: string;
}

export type NewTakeoverEntry = Omit<
  TakeoverEntry,
  'status' | 'round' | 'createdAt' | 'firstOpenedAt' | 'updatedAt' | 'resolution' | 'history' | 'notified'
>;

export type OpenResult = { change: 'opened' | 'reopened' | 'unchanged'; entry: TakeoverEntry };

/** The human takeover queue in DynamoDB. Every state change is a conditional write, so two operators cannot both resolve one item. */
export class TakeoverStore {
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
    return result.Item as TakeoverEntry | undefined;
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
    for await (const page of pages) entries.push(...((page.Items ?? []) as TakeoverEntry[]));
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
    return result?.Attributes as TakeoverEntry | undefined;
  }
}
