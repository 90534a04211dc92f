import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFailure } from '../../src/domain/commit-point.js';
import {
  AmbiguousOutcomeError,
  ApprovalNotProvenError,
  SessionLostError,
  StructuredContractMissingError,
  VendorSessionsBusyError,
  WriteNotCommittedError,
} from '../../src/domain/errors.js';

// The commit-click rule without a browser: where the write stood decides what its failure means.

test('before the commit click, a failure is "not committed" and keeps its cause', () => {
  const timeout = new Error('page.click: Timeout 10000ms exceeded');
  const error = writeFailure(timeout, 'before_commit');
  assert.ok(error instanceof WriteNotCommittedError);
  assert.equal(error.name, 'WriteNotCommittedError');
  assert.match(error.message, /before the commit click: page\.click: Timeout/);
  assert.equal(error.cause, timeout);
});

test('before the commit click, a missing page element, a lost session or an unproven approval is reported as itself, never as ambiguous', () => {
  for (const cause of [
    new StructuredContractMissingError('step "click role=button name="确认" within the open dialog" found nothing on /diff/list'),
    new SessionLostError('the vendor sent us to /login: the session is gone'),
    new ApprovalNotProvenError('no approval for this payload'),
  ]) {
    const error = writeFailure(cause, 'before_commit');
    assert.equal(error, cause);
    assert.ok(!(error instanceof AmbiguousOutcomeError));
  }
});

test('before the commit click, a lost vendor-session slot stays VendorSessionsBusyError, which the workflows retry', () => {
  const lost = new VendorSessionsBusyError('vendor session slot 0 of identity svc was lost before the commit click', { slotLost: true });
  assert.equal(writeFailure(lost, 'before_commit'), lost);
  assert.ok(writeFailure(lost, 'after_commit') instanceof AmbiguousOutcomeError, 'after the click it is no reason to retry');
});

test('after the commit click, a failure is ambiguous: the write may have landed', () => {
  const crash = new Error('Target page, context or browser has been closed');
  const error = writeFailure(crash, 'after_commit');
  assert.ok(error instanceof AmbiguousOutcomeError);
  assert.match(error.message, /may have landed: Target page/);
  assert.equal(error.cause, crash);
  // A missing element after the click says nothing about whether the click landed.
  assert.ok(writeFailure(new StructuredContractMissingError('the toast is gone'), 'after_commit') instanceof AmbiguousOutcomeError);
});

test("after the commit click, the vendor's own answer and a lost session are kept as they are", () => {
  for (const cause of [
    new WriteNotCommittedError('the vendor answered "操作失败"'),
    new AmbiguousOutcomeError('the vendor did not answer in time'),
    new SessionLostError('the login form shows again'),
  ]) {
    assert.equal(writeFailure(cause, 'after_commit'), cause);
  }
});

test('a thrown value that is not an Error is classified by the same rule', () => {
  assert.ok(writeFailure('boom', 'before_commit') instanceof WriteNotCommittedError);
  assert.ok(writeFailure('boom', 'after_commit') instanceof AmbiguousOutcomeError);
});
