import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { ClaimFencedError, failureMessage } from '../../domain/errors.js';
import { evidenceKey } from '../ports/evidence.js';
import { recordClosedItem } from '../../evidence/item-closed.js';
import { enqueueTakeover } from '../takeover/queue.js';
import type { CompensationOutcome, ItemOutcome, ItemState } from './state.js';
import { outcomeRecord } from './outcome-record.js';

/** Takeover: the machine refuses to decide; a person gets the item with its evidence. */
export async function takeover(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemOutcome> {
  const { state, executionArn } = input;
  const { item } = state;
  const compensation = compensationNote(state.compensation);
  const reason = (state.readback?.why ?? failureMessage(state.takeoverReason)) + compensation;
  const errorName = state.takeoverReason?.Error;
  // Only the run that holds the claim hands the item over: a run fenced out meanwhile must not queue, overwrite records or move the claim.
  // A run that lost the claim holds nothing, whatever brought it here: it never moves or queues another run's claim.
  const lost = state.claim?.decision === 'skip' || state.claim?.decision === 'blocked';
  const held = state.claim && !lost && 'claim' in state.claim ? state.claim.claim : undefined;
  const ours = (c: Claim | undefined): c is Claim => !lost && !!c && (!held || (c.owner === held.owner && c.version === held.version));
  let claim = await s.claims.get(item.key);
  if (ours(claim) && (claim.status === 'CLAIMED' || claim.status === 'WRITING')) {
    try {
      claim = await s.claims.transition(
        item.key,
        { owner: claim.owner, version: claim.version, from: ['CLAIMED', 'WRITING'] },
        'TAKEOVER',
        {
          outcome: 'takeover',
          reason,
        },
      );
    } catch (error) {
      if (!(error instanceof ClaimFencedError)) throw error;
      claim = await s.claims.get(item.key);
    }
  }
  if (!ours(claim) || claim.status !== 'TAKEOVER') {
    await s.audit.append(item.key, {
      type: 'takeover_not_taken',
      actor: item.identity,
      data: { reason, error: errorName ?? null, claimStatus: claim?.status ?? null, claimOwner: claim?.owner ?? null, executionArn },
    });
    return {
      outcome: 'skipped',
      key: item.key,
      billNo: item.billNo,
      reason: `not handed over: the claim is ${claim?.status ?? 'missing'} under another run (${reason})`,
    };
  }
  const record = outcomeRecord(state, 'takeover', executionArn, { reason, error: errorName ?? null });
  await s.evidence.put(evidenceKey(item, 'record.json'), JSON.stringify(record, null, 2), 'application/json');
  const queued = await enqueueTakeover(s, { state, executionArn, claimVersion: claim.version, reason, errorName: errorName ?? null });
  if (queued.change !== 'unchanged') {
    await s.audit.append(item.key, {
      type: 'takeover',
      actor: item.identity,
      data: { reason, error: errorName ?? null, round: queued.entry.round, stage: queued.entry.stage, evidence: queued.entry.evidence },
    });
    await recordClosedItem(s, item, 'takeover');
  }
  return { outcome: 'takeover', key: item.key, billNo: item.billNo, reason };
}

function compensationNote(compensation: CompensationOutcome | null): string {
  if (!compensation) return '';
  if ('Error' in compensation) return `; compensation failed: ${failureMessage(compensation)}`;
  return compensation.rolledBack
    ? '; compensation rolled it back (verified by readback)'
    : `; compensation failed: ${compensation.outcome}`;
}
