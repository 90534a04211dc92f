import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceKey } from '../../src/adapters/s3/evidence-store.js';
import { idempotencyKey } from '../../src/domain/task.js';
import type { LedgerlyControl } from '../../src/ledgerly/control-client.js';
import { startLedgerlyHarness, type Harness } from '../support/embedded.js';
import { approvalRequestFor, linkFromInbox, openLink, postDecision, waitUntil } from '../approvals/helpers.js';

/**
 * The guarded path against Ledgerly, the second back office, through the pack
 * written from its docs alone (sitepacks/ledgerly.yaml): a hash-route SPA with
 * cards, a two-write resolve (reason saved in a role-less modal, then Resolve),
 * an async review, a typed-amount refund alertdialog behind a More menu, and a
 * cookie-authenticated JSON API as the readback and ownership source.
 */
describe('guarded writes on Ledgerly', () => {
  let h: Harness<LedgerlyControl>;
  before(async () => {
    h = await startLedgerlyHarness();
  });
  after(async () => {
    await h?.stop();
  });

  // acme: N-7001, N-7002 billing errors, N-7003 a duplicate charge, N-7004 resolved; globex: N-8001, N-8002.
  const small = {
    seed: 3,
    orgs: [
      { id: 'acme', billingErrors: 2, duplicateCharges: 1, resolved: 1, refunded: 0 },
      { id: 'globex', billingErrors: 1, duplicateCharges: 1, resolved: 0, refunded: 0 },
    ],
  };
  const entries = async (billNo: string, action: string) =>
    (await h.control.journal()).filter((e) => e.billNo === billNo && e.action === action);
  const resolveTask = (billNo: string, taskId: string, tenant = 'acme') => ({
    taskId,
    tenant,
    billNo,
    action: 'resolve',
    requestedBy: 'schedule',
    params: { reason: 'Credit note issued by Paperclip reconciliation' },
  });

  test('batches for two orgs: every billing error resolved in two vendor writes, confirmed by the API after review; the refund waits for approval, then runs once', async () => {
    await h.control.reset(small);
    const acme = await h.paperclip.runBatch({ taskId: 'T-ledgerly-batch', tenant: 'acme' });
    assert.equal(acme.status, 'SUCCEEDED', acme.error);
    assert.equal(acme.summary?.read, 4, 'three pending cards and a resolved one, across Load more');
    assert.equal(acme.summary?.counts.done, 2);
    assert.equal(acme.summary?.counts.awaiting_approval, 1);
    const globex = await h.paperclip.runBatch({ taskId: 'T-ledgerly-batch', tenant: 'globex' });
    assert.equal(globex.status, 'SUCCEEDED', globex.error);
    assert.equal(globex.summary?.counts.done, 1);

    for (const billNo of ['N-7001', 'N-7002', 'N-8001']) {
      assert.equal((await entries(billNo, 'edit')).length, 1, `${billNo}: the reason saved once`);
      assert.equal((await entries(billNo, 'resolve')).length, 1, `${billNo}: resolved once`);
      const tenant = billNo.startsWith('N-7') ? 'acme' : 'globex';
      const claim = (await h.paperclip.services.claims.get(idempotencyKey(resolveTask(billNo, 'T-ledgerly-batch', tenant))))!;
      assert.equal(claim.status, 'DONE');
      const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
      assert.equal(record.verdict, 'confirmed');
      assert.equal(record.readbackSource, 'api', 'read back through the JSON API in a session of its own');
      const objects = await h.paperclip.services.evidence.list(evidenceKey(claim, ''));
      for (const name of ['before.png', 'after.png', 'readback.png', 'trace.zip', 'record.json']) {
        assert.ok(objects.includes(evidenceKey(claim, name)), `${billNo} has ${name}`);
      }
    }
    assert.deepEqual(await entries('N-7003', 'refund'), [], 'no refund before approval');

    const refund = { taskId: 'T-ledgerly-batch', tenant: 'acme', billNo: 'N-7003', action: 'refund', requestedBy: 'schedule', params: {} };
    const key = idempotencyKey(refund);
    const asHarness = h as unknown as Parameters<typeof approvalRequestFor>[0];
    const request = await approvalRequestFor(asHarness, key);
    const link = await linkFromInbox(asHarness, request.approvalId, 'finance.lead@acme.example');
    const form = await openLink(link);
    const decided = await postDecision(asHarness, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.ok(decided.status < 400, decided.html.slice(0, 200));
    const done = await waitUntil('the approved refund to close', async () => {
      const claim = await h.paperclip.services.claims.get(key);
      return claim && ['DONE', 'TAKEOVER'].includes(claim.status) ? claim : undefined;
    });
    assert.equal(done.status, 'DONE', 'refunded through the typed-amount dialog, confirmed after Refund pending');
    const refunds = await entries('N-7003', 'refund');
    assert.equal(refunds.length, 1);
  });

  test('an item of another org is rejected at routing with the reason, before any browser opens; the vendor is not written', async () => {
    await h.control.reset(small);
    const browsers = h.paperclip.services.sessions.stats;
    const result = await h.runTask(resolveTask('N-8001', 'T-ledgerly-scope'));
    assert.equal(result.output['outcome'], 'rejected');
    assert.match(String(result.output['reason']), /N-8001 is not visible to svc-ledgerly-acme \(api\)/);
    assert.deepEqual(
      h.paperclip.services.sessions.stats,
      browsers,
      'ownership read through api.login: no browser context created or reused',
    );
    assert.deepEqual(await h.control.journal(), []);
  });

  test('half success: the page says saved and resolved, readback says not applied; takeover, never done', async () => {
    await h.control.reset(small);
    await h.control.setFaults([{ kind: 'half_success', bill: 'N-7001' }]);
    const result = await h.runTask(resolveTask('N-7001', 'T-ledgerly-half'));
    assert.equal(result.output['outcome'], 'takeover');
    assert.deepEqual(await entries('N-7001', 'resolve'), []);
    assert.equal((await h.paperclip.services.claims.get(idempotencyKey(resolveTask('N-7001', 'T-ledgerly-half'))))!.status, 'TAKEOVER');
  });

  test('a revoked session (401 to the page, back to #/login) fails the item loudly, without a retry', async () => {
    await h.control.reset(small);
    await h.control.setFaults([{ kind: 'session_revoked', identity: 'billing@acme.test' }]);
    const result = await h.runTask(resolveTask('N-7002', 'T-ledgerly-revoked'));
    assert.notEqual(result.output['outcome'], 'done');
    assert.match(String(result.output['reason']), /SessionLostError/);
    assert.deepEqual(await h.control.journal(), []);
  });
});
