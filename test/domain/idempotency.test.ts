import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idempotencyKey, KEY_PATTERN, tenantKeyPrefix, tenantOfKey } from '../../src/domain/task.js';

test('the idempotency key is stable, differs in every part, and is a valid execution name', () => {
  const task = { taskId: 'T-20261202-acme', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'mark_processed' };
  const key = idempotencyKey(task);
  assert.equal(idempotencyKey({ ...task }), key, 'the same task always gives the same key');
  for (const field of ['taskId', 'tenant', 'billNo', 'action'] as const) {
    assert.notEqual(idempotencyKey({ ...task, [field]: `${task[field]}x` }), key, `${field} is part of the key`);
  }
  // Step Functions execution names: 1-80 characters, no whitespace or special characters.
  assert.match(key, /^[A-Za-z0-9_-]{1,80}$/);
  assert.match(key, KEY_PATTERN);
  // The separator cannot be forged by moving text between fields.
  assert.notEqual(
    idempotencyKey({ ...task, tenant: 'acme|ACME', billNo: '202611-0001' }),
    idempotencyKey({ ...task, tenant: 'acme', billNo: 'ACME|202611-0001' }),
  );
});

test("a key starts with its tenant's prefix, which no other tenant's prefix shares, and stays a valid name for the longest tenant", () => {
  const key = idempotencyKey({ taskId: 'T-1', tenant: 'acme', billNo: 'B-1', action: 'mark_processed' });
  assert.ok(key.startsWith('k-acme_'), key);
  assert.equal(tenantOfKey(key), 'acme');
  // IAM matches `k-acme_*`; tenant ids have no `_`, so acme-eu's keys never match it.
  const other = idempotencyKey({ taskId: 'T-1', tenant: 'acme-eu', billNo: 'B-1', action: 'mark_processed' });
  assert.ok(!other.startsWith(tenantKeyPrefix('acme')));
  const longest = idempotencyKey({ taskId: 'T-1', tenant: `a${'b'.repeat(40)}`, billNo: 'B-1', action: 'x' });
  assert.ok(longest.length <= 80, `${longest.length} characters`);
  assert.match(longest, KEY_PATTERN);
  assert.equal(tenantOfKey('k-0123'), undefined);
});
