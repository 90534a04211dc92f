import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { ClaimFencedError, failureMessage } from '../../domain/errors.js';
import { evidenceKey } from '../ports/evidence.js';
import { recordClosedItem } from '../../evidence/item-closed.js';
import { enqueueTakeover } from '../takeover/queue.js';
import type { CompensationOutcome, ItemOutcome, ItemState } from './state.js';
import { outcomeRecord } from './outcome-record.js';
import { buildReason, renderReason, type StructuredReason } from '../../domain/reason.js';

/** Takeover: the machine refuses to decide; a person gets the item with its evidence. */
export async function takeover(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemOutcome> {
  const { state, executionArn } = input;
  const { item } = state;
  const compensation = compensationNote(state.compensation);
  const headline = (state.readback?.why ?? failureMessage(state.takeoverReason)) + compensation;
  const errorName = state.takeoverReason?.Error;
  // The reason states what is known, not only what stopped the item: the commit click, each source's reading, the verdict.
  const structured = await takeoverReason(s, state, headline);
  const { known } = structured;
  const reason = renderReason(structured);
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
          known,
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
  const record = outcomeRecord(state, 'takeover', executionArn, { reason, error: errorName ?? null, known });
  await s.evidence.put(evidenceKey(item, 'record.json'), JSON.stringify(record, null, 2), 'application/json');
  const queued = await enqueueTakeover(s, {
    state,
    executionArn,
    claimVersion: claim.version,
    reason,
    known,
    errorName: errorName ?? null,
  });
  if (queued.change !== 'unchanged') {
    await s.audit.append(item.key, {
      type: 'takeover',
      actor: item.identity,
      data: {
        reason,
        error: errorName ?? null,
        round: queued.entry.round,
        stage: queued.entry.stage,
        evidence: queued.entry.evidence,
        known,
      },
    });
    await recordClosedItem(s, item, 'takeover');
  }
  return { outcome: 'takeover', key: item.key, billNo: item.billNo, reason };
}

/**
 * The item's reason from its trail: whether the commit click happened, what the write page and each readback source
 * saw (src/domain/reason.ts). The state before the write is the snapshot's, else the one registered on the claim.
 */
export async function takeoverReason(s: Services, state: ItemState, headline: string): Promise<StructuredReason> {
  const { item } = state;
  const [events, claim] = await Promise.all([s.audit.events(item.key), s.claims.get(item.key)]);
  const action = s.pack.actions[item.action];
  const preStatus = state.snapshot?.preStatus ?? claim?.preState?.status;
  // An action verified through the API reads PRESENT/ABSENT (src/app/guarded-write/readback.ts), not statuses.
  const verified = action?.verify !== undefined;
  const targetStatus = verified ? 'PRESENT' : action?.targetStatus;
  return buildReason({
    headline,
    events,
    writeReturned: state.write != null,
    readback: state.readback?.verdict,
    targetStatus,
    preStatus: verified ? 'ABSENT' : preStatus,
  });
}

function compensationNote(compensation: CompensationOutcome | null): string {
  if (!compensation) return '';
  if ('Error' in compensation) return `; compensation failed: ${failureMessage(compensation)}`;
  return compensation.rolledBack
    ? '; compensation rolled it back (verified by readback)'
    : `; compensation failed: ${compensation.outcome}`;
}
