import { z } from 'zod';
import { WriteIdentityRecord } from './claims.js';
import { KnownFacts } from '../../domain/known-facts.js';

/**
 * The human takeover queue as the app layer and the operators' commands use it. The DynamoDB adapter implements
 * the port (src/adapters/dynamodb/takeover-store.ts); a test fakes it in memory.
 */

export const TAKEOVER_STATUSES = ['OPEN', 'RESOLVED'] as const;
export type TakeoverStatus = (typeof TAKEOVER_STATUSES)[number];
export const RESOLUTIONS = ['done', 'retry', 'abandon'] as const;
export type ResolutionKind = (typeof RESOLUTIONS)[number];

export const TakeoverResolution = z.object({
  as: z.enum(RESOLUTIONS),
  operator: z.string(),
  note: z.string(),
  at: z.string(),
  /** retry: the guarded-write execution that re-runs the item (readback first). */
  retryExecutionArn: z.string().optional(),
  /** retry: that execution's outcome, once it finished. */
  retryOutcome: z.string().optional(),
  /** A retry that ended without a reason stores null. */
  retryReason: z.string().nullish(),
});
export type TakeoverResolution = z.infer<typeof TakeoverResolution>;

/** One round in the queue: the item was handed to people, and (maybe) how they answered. */
export const TakeoverRound = z.object({
  round: z.number(),
  openedAt: z.string(),
  reason: z.string(),
  known: KnownFacts.optional(),
  errorName: z.string().nullable(),
  executionArn: z.string(),
  resolution: TakeoverResolution.optional(),
});
export type TakeoverRound = z.infer<typeof TakeoverRound>;

/**
 * An item the machine refused to decide, as stored: what a read is parsed with. One entry per idempotency key; a
 * key that comes back after an operator's retry reopens its entry (round + 1) and keeps the earlier rounds in `history`.
 */
export const TakeoverEntry = WriteIdentityRecord.extend({
  reason: z.string(),
  /** What the reason says, as fields: the commit click, each source's reading, the verdict (src/domain/reason.ts). */
  known: KnownFacts.optional(),
  errorName: z.string().nullable(),
  /** The tool-ladder tier the item reached (api, browser, visual). */
  tier: z.string(),
  /** How far the guarded path got before it stopped. */
  stage: z.string(),
  /** True when a readback had to fall to a lower source because the structured contract was missing. */
  degraded: z.boolean(),
  /** Evidence object keys in the evidence bucket. */
  evidence: z.array(z.string()),
  evidenceBucket: z.string(),
  executionArn: z.string(),
  /** The claim's fencing version when it went to takeover. */
  claimVersion: z.number(),
  status: z.enum(TAKEOVER_STATUSES),
  round: z.number(),
  /** When this round opened; the byStatus index sorts on it. */
  createdAt: z.string(),
  firstOpenedAt: z.string(),
  updatedAt: z.string(),
  resolution: TakeoverResolution.optional(),
  history: z.array(TakeoverRound),
  notified: z.array(z.string()),
  notifiedAt: z.string().optional(),
  /** A notice that went out stores null here. */
  notifyError: z.string().nullish(),
});
export type TakeoverEntry = z.infer<typeof TakeoverEntry>;

export type NewTakeoverEntry = Omit<
  TakeoverEntry,
  'status' | 'round' | 'createdAt' | 'firstOpenedAt' | 'updatedAt' | 'resolution' | 'history' | 'notified'
>;

export type OpenResult = { change: 'opened' | 'reopened' | 'unchanged'; entry: TakeoverEntry };

export interface TakeoverPort {
  /** Puts an item in the queue; idempotent per execution, and a later run on a resolved entry reopens it. */
  open(input: NewTakeoverEntry, now?: string): Promise<OpenResult>;
  get(key: string): Promise<TakeoverEntry | undefined>;
  /** Entries with a status, oldest first, optionally of one tenant. */
  list(status: TakeoverStatus, tenant?: string): Promise<TakeoverEntry[]>;
  /** OPEN -> RESOLVED for the given round; undefined if someone else resolved it first. */
  resolve(key: string, round: number, resolution: TakeoverResolution): Promise<TakeoverEntry | undefined>;
  /** Undoes a resolution whose action could not be carried out (the item is the operators' again). */
  reopenUnresolved(key: string, round: number): Promise<TakeoverEntry | undefined>;
  /** Records how an operator's retry ended, unless the entry moved on (reopened) meanwhile. */
  recordRetryOutcome(key: string, round: number, outcome: string, reason: string | undefined): Promise<TakeoverEntry | undefined>;
  recordNotification(key: string, round: number, notified: string[], error?: string): Promise<void>;
}
