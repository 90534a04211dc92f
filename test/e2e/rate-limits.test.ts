import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { idempotencyKey } from '../../src/domain/task.js';
import { useHarness } from '../support/embedded.js';

/**
 * The vendor's rate limit (the simulator's rate_limited fault: 429 with Retry-After) through the real workflow:
 * a rate-limited page or API read is waited out and the batch completes; a rate-limited commit request is "not
 * committed" (never "may have landed") and is retried safely, so the journal holds exactly one write.
 */
describe('429 and Retry-After on the embedded stack', () => {
  const h = useHarness();
  beforeEach(async () => {
    await h.control.reset({ seed: 3, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
  });
  const marksOf = async (billNo?: string) =>
    (await h.control.journal()).filter((e) => e.action === 'mark' && (billNo === undefined || e.billNo === billNo));
  const limited = async () => (await h.control.timings()).filter((t) => t.status === 429);

  test('a 429 on the list page and on an API read is waited out: the batch completes', async () => {
    await h.control.setFaults([
      // The batch's list read (a page), then the ownership read of one bill (the vendor API).
      { kind: 'rate_limited', tenant: 'acme', requests: 'reads', ms: 1000, times: 1 },
      { kind: 'rate_limited', bill: 'ACME-202611-0002', requests: 'reads', ms: 1000, times: 1 },
    ]);
    const run = await h.paperclip.runBatch({ taskId: 'T-429-read', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.done, 3);
    assert.equal((await marksOf()).length, 3);
    const refused = await limited();
    assert.equal(refused.length, 2, JSON.stringify(refused));
    assert.ok(refused.some((t) => t.method === 'GET' && t.path.startsWith('/diff/list?tenant=acme')));
    assert.ok(refused.some((t) => t.method === 'GET' && t.path.startsWith('/api/v1/bills/ACME-202611-0002')));
  });

  test('a 429 on the commit click request: not committed, retried, exactly one write in the journal', async () => {
    const billNo = 'ACME-202611-0001';
    const task = { taskId: 'T-429-commit', tenant: 'acme', billNo, action: 'mark_processed' };
    await h.control.setFaults([{ kind: 'rate_limited', bill: billNo, requests: 'writes', ms: 1000, times: 1 }]);
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.equal((await marksOf(billNo)).length, 1, 'exactly one write');
    assert.deepEqual(
      (await limited()).map((t) => `${t.method} ${t.path}`),
      [`POST /diff/${billNo}/mark`],
    );
    const events = await h.paperclip.services.audit.events(idempotencyKey(task));
    const failed = events.filter((e) => e.type === 'write_failed' && /429/.test(String(e.data['message'])));
    assert.equal(failed.length, 1, JSON.stringify(events.filter((e) => e.type === 'write_failed').map((e) => e.data['message'])));
    assert.equal(failed[0]!.data['error'], 'WriteNotCommittedError');
    assert.match(
      String(failed[0]!.data['message']),
      /rate limited: the vendor answered 429 Too Many Requests \(Retry-After 1 s\) to POST \/diff\/ACME-202611-0001\/mark: not committed/,
    );
    assert.doesNotMatch(JSON.stringify(events), /may have landed/);
    assert.equal(events.filter((e) => e.type === 'write_started').length, 2, 'clicked again after a negative readback');
  });
});
