import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compensate } from '../../src/app/compensation.js';
import { batchKey, evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { verifyBatch } from '../../src/evidence/verify.js';
import { useHarness } from '../support/embedded.js';

/**
 * What happens to an item's evidence when it closes, and when it is undone
 * later: the item's page is written from its own folder (never by listing the
 * whole batch folder, which would make a batch's evidence cost grow with the
 * square of its size), and a write compensated after its batch was sealed gets
 * its page rewritten and re-sealed, so an auditor opening it sees the rollback.
 */
describe('evidence when an item closes', () => {
  const h = useHarness();

  /** Every ListObjectsV2 prefix the services send while `run` runs (a recording step on the real S3 client). */
  async function listedPrefixes(run: () => Promise<void>): Promise<string[]> {
    const prefixes: string[] = [];
    const name = `record-list-prefixes-${Date.now()}`;
    h.paperclip.services.clients.s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ListObjectsV2Command') prefixes.push(String((args.input as { Prefix?: string }).Prefix));
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      await run();
    } finally {
      h.paperclip.services.clients.s3.middlewareStack.remove(name);
    }
    return prefixes;
  }

  test('closing an item lists only its own folder, however many items the task already has', async () => {
    await h.control.reset({ seed: 3, tenants: [{ id: 'acme', pending: 4, overcharge: 0, processed: 0 }] });
    const taskId = 'T-close-cost';
    const bills = ['ACME-202611-0001', 'ACME-202611-0002', 'ACME-202611-0003'];
    const prefixes = await listedPrefixes(async () => {
      for (const billNo of bills) {
        const run = await h.runTask({ taskId, tenant: 'acme', billNo, action: 'mark_processed' });
        assert.equal(run.output['outcome'], 'done', JSON.stringify(run.output));
      }
    });
    const folder = `evidence/acme/${taskId}/`;
    const keys = bills.map((billNo) => idempotencyKey({ taskId, tenant: 'acme', billNo, action: 'mark_processed' }));
    assert.ok(
      keys.every((key) => prefixes.includes(`${folder}${key}/`)),
      `each close lists its own item folder (saw ${prefixes.join(', ')})`,
    );
    // Besides its own folder, a close may only look up single objects by their full key.
    const single = /^(batch\.json|seal\.json|list\.json|k-[a-z0-9-]+_[0-9a-f]{32}\/index\.html)$/;
    for (const prefix of prefixes.filter((p) => p.startsWith(folder) && !keys.some((key) => p === `${folder}${key}/`))) {
      assert.match(prefix.slice(folder.length), single, `a close listed ${prefix}, more than its own folder or one object`);
    }
    for (const key of keys) {
      const page = (await h.paperclip.services.evidence.get(evidenceKey({ tenant: 'acme', taskId, key }, 'index.html')))?.toString() ?? '';
      assert.match(page, /独立回读 Readback/, `${key} has its page`);
      assert.doesNotMatch(page, /← 批次 Batch/, 'no batch page to link back to: these tasks ran without a batch');
    }
  });

  test('a write undone after its batch was sealed: its page shows the rollback and links the inverse, both re-sealed, verify clean', async () => {
    await h.control.reset({ seed: 5, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const taskId = 'T-undone-after-seal';
    const batch = { tenant: 'acme', taskId };
    const run = await h.paperclip.runBatch(batch);
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.ok((await h.paperclip.services.evidence.get(batchKey(batch, 'seal.json'))) !== undefined, 'the batch is sealed');
    const [original] = (await h.paperclip.services.claims.byTask(taskId)).sort((a, b) => a.billNo.localeCompare(b.billNo));
    const pageOf = async (key: string) =>
      (await h.paperclip.services.evidence.get(evidenceKey({ ...batch, key }, 'index.html')))?.toString() ?? '';
    assert.doesNotMatch(await pageOf(original!.key), /补偿 Compensation/);

    const undo = await compensate(h.paperclip.services, {
      key: original!.key,
      requestedBy: 'ops@acme.example',
      reason: '标错了 marked by mistake',
    });
    assert.equal(undo.rolledBack, true);

    const page = await pageOf(original!.key);
    assert.match(page, /补偿 Compensation/);
    assert.match(page, /rolled back/);
    assert.ok(page.includes(`href="../${undo.inverseKey}/index.html"`), 'the original links the inverse that undid it');
    assert.match(page, /已补偿 Compensated \(verified by readback\)/, 'the timeline shows the rollback');
    assert.ok((await pageOf(undo.inverseKey)).includes(`href="../${original!.key}/index.html"`), 'the inverse links the write it undid');
    const batchPage = (await h.paperclip.services.evidence.get(batchKey(batch, 'index.html')))?.toString() ?? '';
    assert.ok(batchPage.includes(`undone by <a href="${undo.inverseKey}/index.html"`), 'the batch page marks the write as undone');
    const result = await verifyBatch(h.paperclip.services, batch);
    assert.deepEqual(result.findings, [], 'the rewritten page and the inverse are both in the seal');
  });
});
