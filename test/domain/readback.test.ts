import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, pollUntilSettled, type Observation } from '../../src/domain/readback.js';
import { decideNext } from '../../src/domain/next-after-readback.js';
import type { ItemState } from '../../src/app/guarded-write/state.js';
import { decideOnExistingClaim } from '../../src/domain/claim.js';
import { routedItem, storedClaim } from '../app/guarded-write/memory-ports.js';

const expectation = { targetStatus: 'PROCESSED', settlingStatuses: ['PROCESSING'], preStatus: 'PENDING' };
const obs = (status: string | undefined): Observation => ({ status, at: '', source: 'list' });

test('confirmed as soon as the target shows; settling states keep polling; not applied only once settled', () => {
  assert.equal(judge(expectation, [obs('PROCESSED')])?.verdict, 'confirmed');
  assert.equal(judge(expectation, [obs('PROCESSING')]), undefined);
  assert.equal(judge(expectation, [obs('PENDING')]), undefined, 'one negative look is not settled');
  assert.equal(judge(expectation, [obs('PENDING'), obs('PENDING')])?.verdict, 'not_applied');
  assert.equal(judge(expectation, [obs(undefined), obs(undefined)]), undefined, 'an unreadable source never settles negative');
});

test('a deadline without a settled state is unknown, never success', async () => {
  let clock = 0;
  const result = await pollUntilSettled(expectation, async () => obs('PROCESSING'), {
    deadlineMs: 1000,
    intervalMs: 300,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
  });
  assert.equal(result.verdict, 'unknown');
});

test('what follows a readback', () => {
  const item = { reversibility: 'reversible', inverse: 'unmark_processed' } as ItemState['item'];
  const notApplied = {
    verdict: 'not_applied' as const,
    observedStatus: 'PENDING',
    source: 'list',
    observations: [],
    reason: 'still PENDING',
  };
  const policy = { retry_after_negative_readback: true, max_write_attempts: 2 };
  const snapshot = { stale: false, preStatus: 'PENDING', source: 'api', evidence: [] };
  assert.equal(decideNext(notApplied, { item, snapshot, writeError: { Error: 'WriteNotCommittedError' } }, policy, 1).next, 'retry');
  assert.equal(
    decideNext(notApplied, { item, snapshot, writeError: { Error: 'WriteNotCommittedError' } }, policy, 2).next,
    'takeover',
    'attempts exhausted',
  );
  assert.equal(
    decideNext(notApplied, { item, snapshot, writeError: { Error: 'AmbiguousOutcomeError' } }, policy, 1).next,
    'takeover',
    'an ambiguous write is never retried',
  );
  assert.match(
    decideNext(notApplied, { item, snapshot, write: { tier: 'browser', committed: true, evidence: [], dialogs: [] } }, policy, 1).why,
    /false success/,
  );
  assert.equal(decideNext({ ...notApplied, observedStatus: 'REFUNDED' }, { item, snapshot }, policy, 1).next, 'compensate');
  // A write that failed before its commit click: the takeover reason says why, not just "did not land".
  const beforeCommit = {
    Error: 'WriteNotCommittedError',
    Cause: JSON.stringify({
      errorMessage:
        'write failed before the commit click: step "click role=button name="Resolve"" found nothing on /#/discrepancies/N-7001',
    }),
  };
  const why = decideNext(notApplied, { item, snapshot, writeError: beforeCommit }, policy, 2).why;
  assert.match(why, /^WriteNotCommittedError: write failed before the commit click: step "click role=button name="Resolve"" found nothing/);
  assert.match(why, /readback: still PENDING$/);
  assert.doesNotMatch(why, /write did not land/);
  assert.match(
    decideNext({ ...notApplied, verdict: 'unknown' }, { item, snapshot, writeError: beforeCommit }, policy, 1).why,
    /^WriteNotCommittedError: write failed before the commit click: .*; readback inconclusive: still PENDING$/,
  );
  assert.equal(decideNext({ ...notApplied, verdict: 'unknown' }, { item, snapshot }, policy, 1).next, 'takeover');
});

test('an existing claim: who may do what', () => {
  const base = storedClaim(routedItem(), { status: 'WRITING', version: 3 });
  assert.equal(decideOnExistingClaim(base, 'me', new Date()).kind, 'in_progress_elsewhere');
  assert.equal(decideOnExistingClaim({ ...base, leaseUntil: '2000-01-01T00:00:00Z' }, 'me', new Date()).kind, 'take_over_for_readback');
  assert.equal(
    decideOnExistingClaim({ ...base, status: 'CLAIMED', leaseUntil: '2000-01-01T00:00:00Z' }, 'me', new Date()).kind,
    'take_over_unstarted',
  );
  assert.equal(decideOnExistingClaim({ ...base, status: 'DONE' }, 'me', new Date()).kind, 'already_terminal');
  assert.equal(decideOnExistingClaim({ ...base, owner: 'me' }, 'me', new Date()).kind, 'same_owner');
});

test('the state before the write settles only after the settle window of the last commit click', async () => {
  const windowed = { ...expectation, settlingStatuses: [], preStatusOpenUntil: 5000 };
  assert.equal(judge(windowed, [obs('PENDING'), obs('PENDING')], 1000), undefined, 'a slow vendor may still apply the click');
  assert.equal(judge(windowed, [obs('PENDING'), obs('PENDING')], 5000)?.verdict, 'not_applied');
  assert.equal(judge(windowed, [obs('REFUNDED'), obs('REFUNDED')], 1000)?.verdict, 'not_applied', 'another settled state decides at once');
  const noSnapshot = { ...windowed, preStatus: undefined };
  assert.equal(
    judge(noSnapshot, [obs('PENDING'), obs('PENDING')], 1000),
    undefined,
    'a run started at readback does not know the old state',
  );
  assert.equal(judge(noSnapshot, [obs('PENDING'), obs('PENDING')], 5000)?.verdict, 'not_applied');
  // A clock of its own per poll, moved on by the poll's own sleeps: 5 s of polling every 300 ms, no real wait.
  let clock = 0;
  const onFakeClock = () => {
    clock = 0;
    const sleep = async (ms: number) => {
      clock += ms;
    };
    return { deadlineMs: 5000, intervalMs: 300, now: () => clock, sleep };
  };
  const result = await pollUntilSettled(windowed, async () => obs(clock >= 4000 ? 'PROCESSED' : 'PENDING'), onFakeClock());
  assert.equal(result.verdict, 'confirmed', 'the landed write is seen once the vendor applies it');
  const never = await pollUntilSettled(windowed, async () => obs('PENDING'), onFakeClock());
  assert.equal(never.verdict, 'not_applied', 'the old state to the end of the window is settled, not unknown');
  assert.ok(clock >= 4700, 'and only then');
  assert.match(never.reason, /to the end of the settle window/);
});
