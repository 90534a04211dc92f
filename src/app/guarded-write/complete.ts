import type { Services } from '../services.js';
import { evidenceKey } from '../ports/evidence.js';
import { recordClosedItem, refreshItemEvidence } from '../../evidence/item-closed.js';
import type { CloseAs, ItemOutcome, ItemState } from './state.js';
import { outcomeRecord } from './outcome-record.js';
import { heldClaim } from './step-support.js';
import { expireApprovalsOf } from '../approvals/decide-approval.js';
import { hasType } from '../../domain/audit-events.js';

/**
 * Closes an item that needs no person: done after a confirmed readback;
 * stale, rejected or expired before anything was executed.
 */
export async function complete(
  s: Services,
  input: { state: ItemState; executionArn: string; closeAs: CloseAs; reason?: string },
): Promise<ItemOutcome> {
  const { state, executionArn, closeAs } = input;
  const { item } = state;
  if (closeAs === 'stale') return closeStale(s, input);
  if (closeAs === 'blocked') return closeBlocked(s, input);
  // The claim as this run holds it: a run whose claim was taken over meanwhile is refused, never closes another's.
  const claim = heldClaim(state);
  if (closeAs === 'done') {
    if (state.readback?.verdict !== 'confirmed') throw new Error('an item is done only after a confirmed readback');
    await s.claims.transition(item.key, { ...claim, from: ['WRITING'] }, 'DONE', { outcome: 'done' });
  } else {
    await s.claims.transition(item.key, { ...claim, from: ['CLAIMED'] }, closeAs === 'rejected' ? 'REJECTED' : 'EXPIRED', {
      outcome: closeAs,
      reason: input.reason,
    });
  }
  // The workflow stopped waiting: a request nobody decided is marked EXPIRED, not left pending.
  if (closeAs === 'expired') await expireApprovalsOf(s, item.key);
  // The write's question is answered: the item is free for another task's write (a no-op when it never held it).
  await s.claims.releaseItem(item.tenant, item.billNo, item.key);
  const record = outcomeRecord(state, closeAs, executionArn, input.reason ? { reason: input.reason } : {});
  // Independent of each other (a retried step rewrites both); the item's page, built next, needs both.
  await Promise.all([
    s.evidence.put(evidenceKey(item, 'record.json'), JSON.stringify(record, null, 2), 'application/json'),
    s.audit.append(item.key, {
      type: closeAs === 'done' ? 'completed' : closeAs,
      actor: item.identity,
      data: { verdict: state.readback?.verdict ?? null, reason: input.reason ?? null },
    }),
  ]);
  await recordClosedItem(s, item, closeAs);
  return { outcome: closeAs, key: item.key, billNo: item.billNo, reason: input.reason };
}

/**
 * A stale item: Snapshot moved its claim to STALE and put what it saw in the trail, so only the evidence is left
 * to close. The workflow retries this task, so it is safe to repeat: the record is stamped with the trail's stale
 * event rather than the clock, and stored once, so the page and seal made from it stay true; the run that stores
 * it counts the item's metrics, a repeat only finishes the page and seal.
 */
async function closeStale(s: Services, input: { state: ItemState; executionArn: string; reason?: string }): Promise<ItemOutcome> {
  const { state, executionArn } = input;
  const { item } = state;
  if (!state.snapshot?.stale) throw new Error('an item closes stale only after Snapshot found it so');
  await storeRecordOnce(s, state, 'stale', executionArn, input.reason ? { reason: input.reason } : {});
  await s.claims.releaseItem(item.tenant, item.billNo, item.key);
  return { outcome: 'stale', key: item.key, billNo: item.billNo, reason: input.reason };
}

/**
 * A blocked item: Claim moved its claim to BLOCKED (another key's write on the item was unresolved) and put that in
 * the trail; nothing was written. Like a stale item, only the evidence is left, stamped with the trail's event, so a
 * retried step stores the same record.
 */
async function closeBlocked(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemOutcome> {
  const { state, executionArn } = input;
  const { item } = state;
  const claim = state.claim;
  if (claim?.decision !== 'blocked') throw new Error('an item closes blocked only after Claim found its item held by another write');
  await storeRecordOnce(s, state, 'blocked', executionArn, { reason: claim.reason, openKey: claim.openKey, openStatus: claim.openStatus });
  return { outcome: 'blocked', key: item.key, billNo: item.billNo, reason: claim.reason };
}

/**
 * The record of an item closed with nothing written (stale, blocked), stored once and stamped with the trail's event
 * of that outcome rather than the clock, so a retried step stores the same record; when it is there already, only the
 * item's pages are refreshed.
 */
async function storeRecordOnce(
  s: Services,
  state: ItemState,
  outcome: 'stale' | 'blocked',
  executionArn: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const { item } = state;
  const recordKey = evidenceKey(item, 'record.json');
  if (await s.evidence.exists(recordKey)) {
    await refreshItemEvidence(s, item);
    return;
  }
  const recordedAt = (await s.audit.events(item.key)).filter((e) => hasType(e, outcome)).at(-1)?.at;
  const record = outcomeRecord(state, outcome, executionArn, { ...fields, ...(recordedAt ? { recordedAt } : {}) });
  await s.evidence.put(recordKey, JSON.stringify(record, null, 2), 'application/json');
  await recordClosedItem(s, item, outcome);
}
