import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertBatchRequesterAttested, attestedBatch } from '../../src/app/requester.js';
import { BatchRequest } from '../../src/domain/task.js';

/** Requester attestations of batches, without a stack: the key derived locally from the inline signing secret. */
const services = {
  config: {
    prefix: 'pc',
    requesters: { allow_requested_by_flag: false },
    approvals: { signing_secret: { source: 'inline', value: 'x'.repeat(40) } },
  },
  secretStrings: {},
} as never;
const arn = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:pc-batch:${name}`;

test('a batch attested under a scheduled task id (with colons) is accepted under the id ReadList normalises', async () => {
  const raw = { taskId: 'T-acme-2026-12-02T01:00:00Z', tenant: 'acme', requestedBy: 'operator:alice' };
  const attested = await attestedBatch(services, raw, 'run-1');
  await assertBatchRequesterAttested(services, BatchRequest.parse(attested), arn('run-1'));
  await assert.rejects(
    assertBatchRequesterAttested(services, BatchRequest.parse(attested), arn('run-2')),
    /batch\.requestedBy: .*not attested/,
  );
});

test("no requester is accepted without an attestation, not even the tenant's own schedule", async () => {
  for (const requestedBy of ['schedule:pc-batch-acme', 'schedule', 'schedule:pc-batch-globex', 'finance.lead@acme.example']) {
    await assert.rejects(
      assertBatchRequesterAttested(services, BatchRequest.parse({ taskId: 'T-a', tenant: 'acme', requestedBy }), arn('x')),
      /not attested by an entry point \(it carries no attestation\)/,
      requestedBy,
    );
  }
});
