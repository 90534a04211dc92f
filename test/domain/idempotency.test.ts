import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idempotencyKey } from '../../src/domain/task.js';

test('the idempotency key is stable, differs in every part, and is a valid execution name', () => {
  const task = { taskId: 'T-20261202-acme', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'mark_processed' };
  const key = idempotencyKey(task);
  assert.equal(idempotencyKey({ ...task }), key, 'the same task always gives the same key');
  for (const field of ['taskId', 'tenant', 'billNo', 'action'] as const) {
    assert.notEqual(idempotencyKey({ ...task, [field]: `${task[field]}x` }), key, `${field} is part of the key`);
  }
  // Step Functions execution names: 1-80 characters, no whitespace or special characters.
  assert.match(key, /^[A-Za-z0-9-]{1,80}$/);
  // The separator cannot be forged by moving text between fields.
  assert.notEqual(
    idempotencyKey({ ...task, tenant: 'acme|ACME', billNo: '202611-0001' }),
    idempotencyKey({ ...task, tenant: 'acme', billNo: 'ACME|202611-0001' }),
  );
});
