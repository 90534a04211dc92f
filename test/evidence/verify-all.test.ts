import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { verifyAll } from '../../src/evidence/verify.js';
import { useHarness } from '../support/embedded.js';

/**
 * `audit verify` without flags covers every chain, a task run outside a batch
 * included: such a task has no batch chain, so once its folder is gone nothing
 * but its items' own seal chains names it. Before, it was skipped and the
 * verify came out clean.
 */
describe('audit verify of everything', () => {
  const h = useHarness();

  test('a single-item task whose folder was removed is found through its seal chain and named', async () => {
    const s = h.paperclip.services;
    await h.control.reset({ seed: 4, tenants: [{ id: 'acme', pending: 1, overcharge: 0, processed: 0 }] });
    const task = { taskId: 'T-verify-all-single', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'mark_processed' };
    const run = await h.runTask(task);
    assert.equal(run.output['outcome'], 'done', JSON.stringify(run.output));
    const before = await verifyAll(s, 'acme');
    assert.deepEqual(before.findings, []);
    assert.ok(before.checked.chains >= 2, 'the item chain and its seal chain are checked');

    // With write access to the bucket: the task's whole folder is deleted (delete markers cover every object).
    const folder = `evidence/acme/${task.taskId}/`;
    const objects = await s.evidence.list(folder);
    assert.ok(objects.length > 0);
    for (const key of objects) await s.clients.s3.send(new DeleteObjectCommand({ Bucket: s.evidence.bucket, Key: key }));
    assert.deepEqual(await s.evidence.list(folder), [], 'the folder is gone from a plain listing');

    const after = await verifyAll(s, 'acme');
    const removed = after.findings.filter((f) => f.kind === 'removed' && f.object?.startsWith(folder));
    assert.ok(removed.length > 0, `the removed objects are named: ${JSON.stringify(after.findings)}`);
    assert.ok(
      removed.some((f) => f.object === `${folder}${run.output['key']}/record.json`),
      'its record among them',
    );
  });
});
