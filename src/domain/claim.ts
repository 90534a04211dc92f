import type { StageRecord } from './stage-proof.js';

/**
 * The idempotency registry's rules, without storage. A claim is taken with a
 * conditional put; every later transition is conditional on owner and fencing
 * version, so a runner that lost its claim cannot act on it.
 */

export type ClaimStatus = 'CLAIMED' | 'WRITING' | 'DONE' | 'STALE' | 'FAILED' | 'TAKEOVER' | 'REJECTED' | 'EXPIRED';

/** Statuses after which nothing will touch the item without an operator. */
export const TERMINAL_STATUSES: readonly ClaimStatus[] = ['DONE', 'STALE', 'FAILED', 'TAKEOVER', 'REJECTED', 'EXPIRED'];

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
  /** Which stages of the write committed and what their done checks saw (src/domain/stage-proof.ts). */
  stages?: StageRecord[];
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
