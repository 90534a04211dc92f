import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beforeClick, doneLine, StageUnprovenError, type StageFacts } from '../../src/domain/stage-proof.js';
import { writeFailure } from '../../src/domain/commit-point.js';
import { StructuredContractMissingError } from '../../src/domain/errors.js';

const facts = (over: Partial<StageFacts> = {}): StageFacts => ({
  stage: 'reason_saved',
  line: doneLine('resolve', 0),
  hasDone: true,
  final: false,
  earlier: undefined,
  ...over,
});

test('a done check is trusted only once this write proved it: false before a click of its own, true after', () => {
  assert.deepEqual(beforeClick(facts(), false), { decision: 'click' });
  // True with nothing behind it: a check that matches whatever the page shows, or an effect someone else made.
  const unproven = beforeClick(facts(), true);
  assert.equal(unproven.decision, 'stop');
  assert.match(
    (unproven as { reason: string }).reason,
    /\(actions\.resolve\.tiers\.browser\.stages\[0\]\.done\) already matches before its click/,
  );
  for (const earlier of ['committing', 'seen', 'unseen'] as const) {
    assert.deepEqual(beforeClick(facts({ earlier }), true), { decision: 'skip', mark: 'seen' }, `${earlier}, then seen`);
  }
});

test('a committed stage whose effect is not seen is never clicked again, but for the last stage that readback found not applied', () => {
  for (const earlier of ['committing', 'seen', 'unseen'] as const) {
    assert.equal(beforeClick(facts({ earlier }), false).decision, 'stop', `${earlier}, not seen now`);
  }
  assert.match(
    (beforeClick(facts({ earlier: 'unseen' }), false) as { reason: string }).reason,
    /did not recognise its own effect after the stage committed in an earlier attempt/,
  );
  assert.equal(beforeClick(facts({ earlier: 'committing', final: true }), false).decision, 'click');
  assert.equal(beforeClick(facts({ earlier: 'unseen', final: true }), false).decision, 'stop');
  // Without a done check: an earlier stage that committed cannot be read, so it is never clicked again.
  assert.match(
    (beforeClick(facts({ hasDone: false, earlier: 'committing' }), undefined) as { reason: string }).reason,
    /has no done check, so whether it landed cannot be read/,
  );
  assert.deepEqual(beforeClick(facts({ hasDone: false, earlier: 'committing', final: true }), undefined), { decision: 'click' });
  assert.deepEqual(beforeClick(facts({ hasDone: false }), undefined), { decision: 'click' });
});

test('a stage that cannot prove its done check goes to a person on either side of the commit, never to readback as ambiguous', () => {
  const error = new StageUnprovenError('the done check of stage "x" does not recognise its own effect');
  assert.equal(error.name, StructuredContractMissingError.errorName, 'the workflow sends it to takeover');
  assert.equal(writeFailure(error, 'after_commit'), error);
  assert.equal(writeFailure(error, 'before_commit'), error);
});
