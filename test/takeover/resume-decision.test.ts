import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideNext } from '../../src/domain/next-after-readback.js';
import type { ItemState } from '../../src/app/guarded-write/state.js';
import type { RoutedItem } from '../../src/domain/routing.js';
import { itemState } from '../app/guarded-write/memory-ports.js';

/**
 * A run that starts at Readback (a re-entered WRITING claim, an operator's
 * retry) carries the workflow's initial nulls for write and writeError. A
 * settled negative readback must then follow the action's retry policy, as
 * it does for a state with the fields absent.
 */
test('a resumed run with the workflow state (write: null) may retry after a settled negative readback', () => {
  const item = {
    key: 'k-x',
    taskId: 'T-x',
    tenant: 'acme',
    billNo: 'ACME-202611-0001',
    action: 'mark_processed',
    reversibility: 'reversible',
    inverse: 'unmark_processed',
  };
  const claimed = { decision: 'readback_first', claim: { owner: 'arn:x', version: 2 } } as unknown as ItemState['claim'];
  const asTheWorkflowPassesIt = itemState(item as unknown as RoutedItem, { claim: claimed });
  assert.equal(asTheWorkflowPassesIt.write, null, 'the workflow passes the initial null, not an absent field');
  assert.equal(asTheWorkflowPassesIt.writeError, null);
  const negative = {
    verdict: 'not_applied' as const,
    observedStatus: 'PENDING',
    source: 'list',
    observations: [],
    reason: 'list settled on PENDING, not PROCESSED',
  };
  const policy = { retry_after_negative_readback: true, max_write_attempts: 2 };
  assert.equal(decideNext(negative, asTheWorkflowPassesIt, policy, 1).next, 'retry');
  assert.equal(decideNext(negative, asTheWorkflowPassesIt, policy, 2).next, 'takeover', 'the attempt limit still holds');
  assert.equal(
    decideNext(negative, asTheWorkflowPassesIt, { ...policy, retry_after_negative_readback: false }, 1).next,
    'takeover',
    'and so does the policy',
  );
});
