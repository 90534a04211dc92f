import type { Services } from '../services.js';
import { decideOnExistingClaim, writeIdentity, type Claim } from '../../domain/claim.js';
import type { RoutedItem } from '../../domain/routing.js';
import type { ClaimDecision, ItemState } from './state.js';
import { lease } from './step-support.js';
import { preStateFromRouting } from './snapshot.js';

/**
 * The Claim step: takes the claim and, once it holds it for a browser write without approval whose status routing
 * already read from the vendor API, registers that pre-state and the inverse too, so the item goes from Claim
 * straight to the write (no Snapshot step). It returns the whole workflow state with `claim` (and `snapshot`) set.
 */
export async function claimStep(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemState> {
  const { state, executionArn } = input;
  const claim = await takeClaim(s, { item: state.item, executionArn });
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
      return decision.kind === 'take_over_for_readback' ? { decision: 'readback_first', claim } : { decision: 'proceed', claim };
    }
  }
}
