import { createHash } from 'node:crypto';
import { tenantKeyPrefix } from './task.js';
import type { StageRecord } from './stage-proof.js';
import type { KnownFacts } from './known-facts.js';

/**
 * The idempotency registry's rules, without storage. A claim is taken with a
 * conditional put; every later transition is conditional on owner and fencing
 * version, so a runner that lost its claim cannot act on it.
 */

export type ClaimStatus = 'CLAIMED' | 'WRITING' | 'DONE' | 'STALE' | 'FAILED' | 'TAKEOVER' | 'REJECTED' | 'EXPIRED' | 'BLOCKED';

/**
 * Statuses after which nothing will touch the key without an operator. BLOCKED: another write on the same item was
 * unresolved when this key was claimed; this key wrote nothing, and a later task writes the item.
 */
export const TERMINAL_STATUSES: readonly ClaimStatus[] = ['DONE', 'STALE', 'FAILED', 'TAKEOVER', 'REJECTED', 'EXPIRED', 'BLOCKED'];

/**
 * Statuses of a write whose question is still open: it may be clicking, may have landed, or waits for a person.
 * While a write on an item is in one of these, no other key writes that item (see decideOnItemLock).
 */
export const UNRESOLVED_STATUSES: readonly ClaimStatus[] = ['CLAIMED', 'WRITING', 'TAKEOVER'];

/** What names one guarded write: its idempotency key and the task, tenant, bill, action and identity behind it. */
export interface WriteIdentity {
  key: string;
  taskId: string;
  tenant: string;
  billNo: string;
  action: string;
  identity: string;
}

/** Just the identifying fields of a routed item, claim or entry (the same order every record stores them in). */
export function writeIdentity(of: WriteIdentity): WriteIdentity {
  return { key: of.key, taskId: of.taskId, tenant: of.tenant, billNo: of.billNo, action: of.action, identity: of.identity };
}

/**
 * The item's open-write record: which key holds the item (tenant, bill) while its write is unresolved. It lives in
 * the claims table under the tenant's key prefix (so a tenant session's dynamodb:LeadingKeys confines it like a
 * claim) and is moved only by conditional updates on `holder`. It has no `status` or `taskId`, so the claim scans and
 * the byTask index never see it. `holder` absent: released.
 */
export interface ItemLock {
  key: string;
  kind: 'open-item';
  tenant: string;
  billNo: string;
  holder?: string;
  holderTask?: string;
  holderAction?: string;
  heldSince?: string;
}

/** The open-write record's key: the tenant's prefix, `open_`, and 32 hex digits of the bill number's hash (never an idempotency key's shape). */
export function itemLockKey(tenant: string, billNo: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([tenant, billNo]))
    .digest('hex');
  return `${tenantKeyPrefix(tenant)}open_${digest.slice(0, 32)}`;
}

export type ItemLockDecision =
  /** Free, released, or already held by this key (a retried step, a resumed or retried write of the same key). */
  | { kind: 'take'; expectedHolder?: string }
  /** The holder's write is resolved (done, failed, stale…) but was not released (a crash before the release): take it from it. */
  | { kind: 'replace'; expectedHolder: string }
  /** The inverse of the holder's write (its compensation) may write the item the holder left; it does not take it. */
  | { kind: 'pass' }
  /** Another key's write on the item is unresolved. */
  | { kind: 'blocked'; holder: string; holderStatus: ClaimStatus; holderTask?: string; holderAction?: string };

/**
 * Whether `me` may write the item, given its open-write record and the holder's claim (read consistently). The
 * holder's claim is the truth: a record whose holder settled is free whatever it still says.
 */
export function decideOnItemLock(
  lock: ItemLock | undefined,
  holderClaim: Claim | undefined,
  me: { key: string; compensates?: string | undefined },
): ItemLockDecision {
  const holder = lock?.holder;
  if (!holder) return { kind: 'take' };
  if (holder === me.key) return { kind: 'take', expectedHolder: holder };
  if (me.compensates === holder) return { kind: 'pass' };
  if (!holderClaim || !UNRESOLVED_STATUSES.includes(holderClaim.status)) return { kind: 'replace', expectedHolder: holder };
  return {
    kind: 'blocked',
    holder,
    holderStatus: holderClaim.status,
    ...(lock.holderTask ? { holderTask: lock.holderTask } : {}),
    ...(lock.holderAction ? { holderAction: lock.holderAction } : {}),
  };
}

export interface Claim extends WriteIdentity {
  owner: string;
  status: ClaimStatus;
  version: number;
  leaseUntil: string;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  preState?: { status: string; observedAt: string; source: string };
  inverse?: { action: string; targetStatus?: string };
  outcome?: string;
  reason?: string;
  /** What a takeover reason says, as fields (src/domain/reason.ts). */
  known?: KnownFacts;
  /** Which stages of the write committed and what their done checks saw (src/domain/stage-proof.ts). */
  stages?: StageRecord[];
  /**
   * 429s the vendor answered the write's steps with, routing included (each waited out or named in the step's error),
   * for the batch summary and report; absent: none.
   */
  rateLimited?: number;
  /** Time the write's steps sat out Retry-After waits, in ms. */
  rateLimitWaitMs?: number;
  /** Time the write's requests waited for the identity's request pace (the pack's `pace`), in ms. */
  paceWaitMs?: number;
}

/** What a workflow step adds to its claim about rate limits: 429s met, Retry-After waited, pace waited (ms). */
export interface RateLimitCounts {
  seen: number;
  waitedMs: number;
  pacedMs: number;
}

/** The claim fields `counts` adds to (only those with something to add). */
export function rateLimitFields(counts: RateLimitCounts): Pick<Claim, 'rateLimited' | 'rateLimitWaitMs' | 'paceWaitMs'> {
  return {
    ...(counts.seen > 0 ? { rateLimited: counts.seen } : {}),
    ...(counts.waitedMs > 0 ? { rateLimitWaitMs: Math.round(counts.waitedMs) } : {}),
    ...(counts.pacedMs > 0 ? { paceWaitMs: Math.round(counts.pacedMs) } : {}),
  };
}

export type ExistingClaimDecision =
  /** Same execution re-entering (a retried Lambda): carry on from the claim's status. */
  | { kind: 'same_owner' }
  /** Nobody ever clicked and the holder is gone: take it over (fencing version +1). */
  | { kind: 'take_over_unstarted' }
  /** A click may have happened and the holder is gone: read back first, never click blind. */
  | { kind: 'take_over_for_readback' }
  /** Someone else holds a live lease. */
  | { kind: 'in_progress_elsewhere' }
  /** Already settled. */
  | { kind: 'already_terminal'; status: ClaimStatus };

export function decideOnExistingClaim(existing: Claim, me: string, now: Date): ExistingClaimDecision {
  if (TERMINAL_STATUSES.includes(existing.status)) return { kind: 'already_terminal', status: existing.status };
  if (existing.owner === me) return { kind: 'same_owner' };
  const leaseLive = new Date(existing.leaseUntil).getTime() > now.getTime();
  if (leaseLive) return { kind: 'in_progress_elsewhere' };
  return existing.status === 'WRITING' ? { kind: 'take_over_for_readback' } : { kind: 'take_over_unstarted' };
}
