import type { Services } from '../services.js';
import {
  decideOnExistingClaim,
  decideOnItemLock,
  rateLimitFields,
  writeIdentity,
  type Claim,
  type ClaimStatus,
} from '../../domain/claim.js';
import type { RoutedItem } from '../../domain/routing.js';
import type { ClaimDecision, ClaimRef, ItemState } from './state.js';
import { lease } from './step-support.js';
import { preStateFromRouting } from './snapshot.js';

/**
 * The Claim step: takes the claim and, once it holds it for a browser write without approval whose status routing
 * already read from the vendor API, registers that pre-state and the inverse too, so the item goes from Claim
 * straight to the write (no Snapshot step). It returns the whole workflow state with `claim` (and `snapshot`) set.
 */
export async function claimStep(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemState> {
  const { state, executionArn } = input;
  const taken = await takeClaim(s, { item: state.item, executionArn });
  // Only a write about to start fresh asks for the item: one that resumes (readback first) already holds it.
  const claim = taken.decision === 'proceed' ? await holdItemOrBlock(s, state.item, taken.claim) : taken;
  const claimed: ItemState = { ...state, claim };
  if (claim.decision !== 'proceed') return claimed;
  return { ...claimed, snapshot: (await preStateFromRouting(s, claimed)) ?? null };
}

/**
 * Claim: the conditional put in the idempotency registry. Losing it means
 * skipped; a claim whose owner's lease ran out is taken over with a new
 * fencing version (a WRITING one only for a readback).
 */
export async function takeClaim(s: Services, input: { item: RoutedItem; executionArn: string }): Promise<ClaimDecision> {
  const { item, executionArn } = input;
  const now = new Date().toISOString();
  const fresh: Claim = {
    ...writeIdentity(item),
    owner: executionArn,
    status: 'CLAIMED',
    version: 1,
    leaseUntil: lease(s, item),
    attempts: 1,
    createdAt: now,
    updatedAt: now,
    // Routing's 429s (its ownership read, before this claim existed) start the item's counts.
    ...(item.rateLimitsAtRouting ? rateLimitFields(item.rateLimitsAtRouting) : {}),
  };
  if (await s.claims.tryCreate(fresh)) {
    await s.audit.append(item.key, { type: 'claimed', actor: item.identity, data: { owner: executionArn, version: 1 } });
    return { decision: 'proceed', claim: { owner: executionArn, version: 1 } };
  }
  const existing = await s.claims.get(item.key);
  if (!existing) return takeClaim(s, input);
  const decision = decideOnExistingClaim(existing, executionArn, new Date());
  switch (decision.kind) {
    case 'already_terminal':
      return { decision: 'skip', reason: `already ${decision.status}`, status: decision.status };
    case 'in_progress_elsewhere':
      return { decision: 'skip', reason: 'in progress elsewhere', status: existing.status };
    case 'same_owner':
      return existing.status === 'WRITING'
        ? { decision: 'readback_first', claim: { owner: existing.owner, version: existing.version } }
        : { decision: 'proceed', claim: { owner: existing.owner, version: existing.version } };
    case 'take_over_unstarted':
    case 'take_over_for_readback': {
      const taken = await s.claims.takeOver(existing, executionArn, lease(s, item));
      if (!taken) return { decision: 'skip', reason: 'lost the race to take over an abandoned claim', status: existing.status };
      await s.audit.append(item.key, {
        type: 'claim_taken_over',
        actor: item.identity,
        data: { from: existing.owner, owner: executionArn, version: taken.version, status: taken.status },
      });
      const claim = { owner: executionArn, version: taken.version };
      // This execution's routing counts go to the claim it took over (the fresh claim above starts with them).
      if (item.rateLimitsAtRouting) await s.claims.addRateLimits(item.key, item.rateLimitsAtRouting);
      return decision.kind === 'take_over_for_readback' ? { decision: 'readback_first', claim } : { decision: 'proceed', claim };
    }
  }
}

/** Conditional updates of the item's open-write record a Claim step tries before it gives up on a race it keeps losing. */
const ITEM_LOCK_ATTEMPTS = 3;

/**
 * One open question per item, across tasks: the claim is per key (task + item + action), so without this a second
 * task could write a bill whose first write is still clicking, unread, or in a person's hands. The item's
 * open-write record names the key that holds it; this key takes it when it is free, already its own, or left by a
 * write that has resolved since. When another key's write is unresolved (CLAIMED, WRITING, TAKEOVER), this claim
 * moves to BLOCKED, nothing is written, and the item ends `blocked` naming that key; a later task writes the item
 * once that write is resolved. A compensation passes the write it undoes (it writes what that write left).
 */
async function holdItemOrBlock(s: Services, item: RoutedItem, claim: ClaimRef): Promise<ClaimDecision> {
  const proceed: ClaimDecision = { decision: 'proceed', claim };
  const mine = { tenant: item.tenant, billNo: item.billNo, holder: item.key, holderTask: item.taskId, holderAction: item.action };
  // The common case, an item no write holds, is one conditional write; a held item is read and decided below.
  if (await s.claims.holdItem(mine)) return proceed;
  for (let attempt = 0; attempt < ITEM_LOCK_ATTEMPTS; attempt++) {
    const lock = await s.claims.itemLock(item.tenant, item.billNo);
    const holder = lock?.holder && lock.holder !== item.key ? await s.claims.get(lock.holder) : undefined;
    const decision = decideOnItemLock(lock, holder, item);
    switch (decision.kind) {
      case 'pass':
        return proceed;
      case 'take':
      case 'replace': {
        const held = await s.claims.holdItem(mine, decision.expectedHolder);
        if (held) return proceed;
        continue;
      }
      case 'blocked':
        return block(s, item, claim, decision);
    }
  }
  throw new Error(
    `the open-write record of ${item.tenant} ${item.billNo} changed ${ITEM_LOCK_ATTEMPTS} times while this claim read it; the step is retried`,
  );
}

async function block(
  s: Services,
  item: RoutedItem,
  claim: ClaimRef,
  open: { holder: string; holderStatus: ClaimStatus; holderTask?: string; holderAction?: string },
): Promise<ClaimDecision> {
  const what = [open.holderAction, open.holderTask && `task ${open.holderTask}`].filter(Boolean).join(', ');
  const waiting =
    open.holderStatus === 'TAKEOVER'
      ? `it is in takeover: resolve it (paperclip takeover show ${open.holder}), then run the item under a new task`
      : `it is ${open.holderStatus === 'WRITING' ? 'being written' : 'claimed'} by another run: run the item under a new task once it has closed`;
  const reason = `blocked: ${item.tenant} ${item.billNo} has an unresolved write ${open.holder}${what ? ` (${what})` : ''}; ${waiting}`;
  await s.claims.transition(item.key, { ...claim, from: ['CLAIMED'] }, 'BLOCKED', { outcome: 'blocked', reason });
  await s.audit.append(item.key, {
    type: 'blocked',
    actor: item.identity,
    data: { openKey: open.holder, openStatus: open.holderStatus, reason },
  });
  return { decision: 'blocked', reason, openKey: open.holder, openStatus: open.holderStatus, claim };
}
