import { z } from 'zod';
import type { Claim, ClaimStatus, ItemLock, RateLimitCounts } from '../../domain/claim.js';
import { KnownFacts } from '../../domain/known-facts.js';

/**
 * The idempotency registry as the guarded-write steps use it: a conditional create takes a claim, conditional
 * transitions move it (ClaimFencedError when anyone else moved it). The DynamoDB adapter implements it
 * (src/adapters/dynamodb/claims-store.ts); test/app/guarded-write fakes it in memory.
 */
export interface ClaimsPort {
  /** True if this call created the claim; false if the key was already claimed. */
  tryCreate(claim: Claim): Promise<boolean>;
  /** Every claim still CLAIMED or WRITING, read consistently (for recovering orphans, never on a write path). */
  unsettled(): Promise<Claim[]>;
  /** Every write's claim updated since `since`, of one tenant when given (for reports). */
  updatedSince(filter: { since?: Date; tenant?: string }): Promise<Claim[]>;
  /** The claim, read consistently; undefined when the key was never claimed. */
  get(key: string): Promise<Claim | undefined>;
  /** The claims that exist among `keys` (eventually consistent: for reporting, never for deciding a write). */
  existing(keys: readonly string[]): Promise<Claim[]>;
  /**
   * The claims of a task. With `tenant`: that tenant's, through the tenant-keyed index (`byTenantTask`), which a
   * tenant session may query for its own tenant only. Without: every tenant's, by a scan (operator tools and
   * tests; a function's role has no Scan).
   */
  byTask(taskId: string, tenant?: string): Promise<Claim[]>;
  /**
   * Moves a claim held by `owner` at `version` from one of `from` to `to`, setting extra attributes.
   * Fails with ClaimFencedError if anyone else moved it.
   */
  transition(
    key: string,
    guard: { owner: string; version: number; from: readonly ClaimStatus[] },
    to: ClaimStatus,
    set?: Partial<Omit<Claim, 'key' | 'owner' | 'version' | 'status'>>,
  ): Promise<Claim>;
  /** Takes over an abandoned claim: new owner, fencing version + 1, fresh lease; undefined if it moved meanwhile. */
  takeOver(previous: Claim, newOwner: string, leaseUntil: string): Promise<Claim | undefined>;
  /** The item's open-write record (read consistently); undefined when no write ever held the item. */
  itemLock(tenant: string, billNo: string): Promise<ItemLock | undefined>;
  /**
   * Makes `holder` the item's open write, if the record's holder is still `expectedHolder` (absent: no holder).
   * False when another writer moved it first.
   */
  holdItem(
    lock: { tenant: string; billNo: string; holder: string; holderTask: string; holderAction: string },
    expectedHolder?: string,
  ): Promise<boolean>;
  /** Releases the item if `holder` still holds it; false (and nothing changed) otherwise. */
  releaseItem(tenant: string, billNo: string, holder: string): Promise<boolean>;
  /**
   * Adds a step's rate-limit counts to the claim's `rateLimited`, `rateLimitWaitMs` and `paceWaitMs` (an atomic add
   * that moves nothing else: no status, owner, version or updatedAt). Nothing happens when the key was never claimed.
   */
  addRateLimits(key: string, counts: RateLimitCounts): Promise<void>;
}

const CLAIM_STATUSES = [
  'CLAIMED',
  'WRITING',
  'DONE',
  'STALE',
  'FAILED',
  'TAKEOVER',
  'REJECTED',
  'EXPIRED',
  'BLOCKED',
] as const satisfies readonly ClaimStatus[];

/** The fields that name one write (WriteIdentity), as every record about a write stores them. */
export const WriteIdentityRecord = z.object({
  key: z.string(),
  taskId: z.string(),
  tenant: z.string(),
  billNo: z.string(),
  action: z.string(),
  identity: z.string(),
});

/** A claim as the registry stores it: what a read is parsed with, so a record of another shape is refused by field. */
export const ClaimRecord = WriteIdentityRecord.extend({
  owner: z.string(),
  status: z.enum(CLAIM_STATUSES),
  version: z.number(),
  leaseUntil: z.string(),
  attempts: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  preState: z.object({ status: z.string(), observedAt: z.string(), source: z.string() }).optional(),
  inverse: z.object({ action: z.string(), targetStatus: z.string().optional() }).optional(),
  outcome: z.string().optional(),
  reason: z.string().optional(),
  known: KnownFacts.optional(),
  stages: z.array(z.object({ stage: z.string(), mark: z.enum(['committing', 'seen', 'unseen']), at: z.string() })).optional(),
  rateLimited: z.number().int().min(0).optional(),
  rateLimitWaitMs: z.number().min(0).optional(),
  paceWaitMs: z.number().min(0).optional(),
}) satisfies z.ZodType<Claim>;

// Both ways: a field Claim gains that the record schema does not read fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const claimRecordMatches: Same<z.infer<typeof ClaimRecord>, Claim> = true;
void claimRecordMatches;

/** An item's open-write record as the claims table stores it (see ItemLock). */
export const ItemLockRecord = z.object({
  key: z.string(),
  kind: z.literal('open-item'),
  tenant: z.string(),
  billNo: z.string(),
  holder: z.string().optional(),
  holderTask: z.string().optional(),
  holderAction: z.string().optional(),
  heldSince: z.string().optional(),
}) satisfies z.ZodType<ItemLock>;
