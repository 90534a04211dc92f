import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { batchKey, evidenceKey } from '../../src/app/ports/evidence.js';
import { summaryLine } from '../../src/cli/batch-output.js';
import { compensate } from '../../src/app/compensation.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startSettloHarness, useHarness } from '../support/embedded.js';
import { soakEveryKitFault } from '../support/soak.js';
import { SETTLE_NOTE, settleTask, settloScenario } from '../support/settlo.js';
import { approvalRequestFor, linkFromInbox, openLink, postDecision, waitUntil } from '../approvals/helpers.js';

/**
 * Settlo, the third back office, run the way its docs tell a user to (docs/settlo.md, docs/onboarding.md): one
 * batch per tenant for two 结算中心, an irreversible typed-amount 退款 that waits for a person's approval, and a 处理
 * undone through the pack's inverse (撤回). Every outcome is proven by Settlo's journal, never by the page. Settlo runs
 * with its default rate limit (30 JSON calls per 10 s per user) throughout, at the config's concurrency 2.
 */
describe('Settlo: a batch for two tenants, an approved refund, a compensation', () => {
  const h = useHarness(startSettloHarness);

  // acme: JS-10001–JS-10004 mismatches, JS-10005 an overcharge, JS-10006 processed; globex: JS-20001–JS-20003 mismatches.
  const scenario = settloScenario(11, { acme: { pending: 4, overcharge: 1, processed: 1 }, globex: { pending: 3 } });
  const TASK = 'T-settlo-batch';
  const journal = () => h.control.journal();
  const statusOf = async (billNo: string) => (await h.control.state()).bills.find((b) => b.billNo === billNo)?.status;

  /** Approves an item's refund the way the tenant's approver does: the link in the mail, the page, the form. */
  const approveRefund = async (key: string, approver: string) => {
    const request = await approvalRequestFor(h, key);
    const link = await linkFromInbox(h, request.approvalId, approver);
    const form = await openLink(link);
    assert.equal(form.status, 200, form.html.slice(0, 300));
    const decided = await postDecision(h, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.ok(decided.status < 400, decided.html.slice(0, 300));
  };

  test('two tenants: each tenant’s bills written once, by its own clerk, none of the other’s; the refund waits for approval', async () => {
    await h.control.reset(scenario);
    const acme = await h.paperclip.runBatch({ taskId: TASK, tenant: 'acme' });
    assert.equal(acme.status, 'SUCCEEDED', acme.error);
    assert.equal(acme.summary?.read, 6, 'four mismatches, the overcharge and the processed bill');
    assert.equal(acme.summary?.counts.done, 4, JSON.stringify(acme.summary));
    assert.equal(acme.summary?.counts.awaiting_approval, 1);
    assert.equal(acme.summary?.counts.takeover, 0, JSON.stringify(acme.summary));
    const globex = await h.paperclip.runBatch({ taskId: TASK, tenant: 'globex' });
    assert.equal(globex.status, 'SUCCEEDED', globex.error);
    assert.equal(globex.summary?.counts.done, 3, JSON.stringify(globex.summary));
    assert.equal(globex.summary?.counts.takeover, 0, JSON.stringify(globex.summary));

    const entries = await journal();
    const settled = (tenant: string) =>
      entries
        .filter((e) => e.tenant === tenant)
        .map((e) => [e.billNo, e.action, e.identity])
        .sort();
    assert.deepEqual(settled('acme'), [
      ['JS-10001', 'settle', 'js-acme'],
      ['JS-10002', 'settle', 'js-acme'],
      ['JS-10003', 'settle', 'js-acme'],
      ['JS-10004', 'settle', 'js-acme'],
    ]);
    assert.deepEqual(settled('globex'), [
      ['JS-20001', 'settle', 'js-globex'],
      ['JS-20002', 'settle', 'js-globex'],
      ['JS-20003', 'settle', 'js-globex'],
    ]);
    assert.equal(entries.length, 7, 'nothing else written: no refund before its approval, the processed bill untouched');
    for (const entry of entries) assert.deepEqual(entry.detail?.['after'], { status: 'PROCESSING', note: SETTLE_NOTE }, entry.billNo);

    for (const [billNo, tenant] of [
      ['JS-10001', 'acme'],
      ['JS-20003', 'globex'],
    ] as const) {
      const claim = (await h.paperclip.services.claims.get(idempotencyKey(settleTask({ taskId: TASK, billNo, tenant }))))!;
      assert.equal(claim.status, 'DONE', billNo);
      assert.equal(claim.tenant, tenant);
      const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
      assert.equal(record.verdict, 'confirmed', billNo);
      assert.equal(await statusOf(billNo), 'PROCESSED');
    }

    // Running both again writes nothing: every item is reported as an earlier run settled it.
    const again = await h.paperclip.runBatch({ taskId: TASK, tenant: 'globex' });
    assert.equal(again.status, 'SUCCEEDED', again.error);
    assert.equal(again.summary?.already?.done, 3, JSON.stringify(again.summary));
    assert.equal((await journal()).length, 7);
  });

  test('the approved 退款: typed amount read from the dialog, committed once after the approver said yes, journal-proven', async () => {
    const refund = { taskId: TASK, tenant: 'acme', billNo: 'JS-10005', action: 'refund', requestedBy: 'schedule', params: {} };
    const key = idempotencyKey(refund);
    assert.deepEqual(
      (await journal()).filter((e) => e.billNo === 'JS-10005'),
      [],
      'nothing refunded while the approval is open',
    );
    const bill = (await h.control.state()).bills.find((b) => b.billNo === 'JS-10005')!;
    assert.equal(bill.status, 'PENDING');
    await approveRefund(key, 'finance.lead@acme.example');
    const done = await waitUntil('the approved refund to close', async () => {
      const claim = await h.paperclip.services.claims.get(key);
      return claim && ['DONE', 'TAKEOVER', 'FAILED'].includes(claim.status) ? claim : undefined;
    });
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    const refunds = (await journal()).filter((e) => e.billNo === 'JS-10005');
    assert.deepEqual(
      refunds.map((e) => [e.action, e.identity, e.tenant, e.detail?.['amountCents']]),
      [['refund', 'js-acme', 'acme', bill.amountCents]],
    );
    assert.equal(await statusOf('JS-10005'), 'REFUNDED');
    const events = (await h.paperclip.services.audit.events(key)).map((e) => e.type);
    assert.ok(events.indexOf('approved') >= 0 && events.indexOf('approved') < events.indexOf('write_started'), events.join(', '));
    const objects = await h.paperclip.services.evidence.list(evidenceKey(done, ''));
    assert.ok(objects.includes(evidenceKey(done, 'before-commit.png')), 'the typed amount pictured just before the commit click');
  });

  test('a compensation: the 处理 of JS-10002 undone through 撤回; the journal shows the write and its inverse, the bill back to 待处理', async () => {
    const key = idempotencyKey(settleTask({ taskId: TASK, billNo: 'JS-10002' }));
    const result = await compensate(h.paperclip.services, { key, requestedBy: 'ops@acme.example', reason: '误处理 settled by mistake' });
    assert.equal(result.rolledBack, true, JSON.stringify(result));
    assert.equal(result.inverseAction, 'reopen');
    assert.deepEqual(
      (await journal())
        .filter((e) => e.billNo === 'JS-10002')
        .map((e) => [
          e.action,
          e.identity,
          (e.detail?.['before'] as { status?: string } | undefined)?.status,
          (e.detail?.['after'] as { status?: string } | undefined)?.status,
        ]),
      [
        ['settle', 'js-acme', 'PENDING', 'PROCESSING'],
        ['reopen', 'js-acme', 'PROCESSED', 'PENDING'],
      ],
    );
    assert.equal(await statusOf('JS-10002'), 'PENDING');
    const inverse = await h.paperclip.services.claims.get(result.inverseKey);
    assert.equal(inverse?.status, 'DONE');
    const types = (await h.paperclip.services.audit.events(key)).map((e) => e.type);
    assert.equal(types.at(-1), 'compensated', types.join(', '));
    // The other tenant's bills and acme's other writes are as they were.
    assert.equal(await statusOf('JS-10001'), 'PROCESSED');
    assert.equal(await statusOf('JS-20001'), 'PROCESSED');
  });
  test('the pack’s pace, at concurrency 2 with the ownership check and both readback sources kept: every item done, each 429 counted', async () => {
    // Settlo's limit a little over the pack's pace (24 JSON calls in 10 s per identity): without the pace a batch at
    // concurrency 2 goes over it. On top, two bills' reads refused with 429 twice each (the kit's fault, before
    // Settlo's own limit), so the count has something to count.
    await h.control.reset({
      ...scenario,
      rateLimit: { max: 26, windowSeconds: 10 },
      tenants: [{ id: 'acme', pending: 6, overcharge: 0, processed: 0 }],
    });
    await h.control.setFaults([
      { kind: 'rate_limited', bill: 'JS-10002', requests: 'reads', ms: 1000, times: 2 },
      { kind: 'rate_limited', bill: 'JS-10005', requests: 'reads', ms: 1000, times: 2 },
    ]);
    const task = 'T-settlo-pace';
    const keyOf = (billNo: string) => idempotencyKey(settleTask({ taskId: task, billNo, tenant: 'acme' }));
    // The safety checks stay on: ownership read from the portal's JSON at routing, and two readback sources.
    assert.equal(h.paperclip.services.pack.ownership?.source, 'api');
    assert.deepEqual(h.paperclip.services.config.write_policy.readback_sources, ['api', 'export']);
    const run = await h.paperclip.runBatch({ taskId: task, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    const summary = run.summary!;
    assert.equal(summary.counts.done, 6, JSON.stringify(summary));

    // The journal: every bill settled exactly once, by acme's clerk; no check was dropped to get there.
    const settled = (await journal()).map((e) => [e.billNo, e.action, e.identity]).sort();
    assert.deepEqual(
      settled,
      [1, 2, 3, 4, 5, 6].map((n) => [`JS-1000${n}`, 'settle', 'js-acme']),
    );
    for (let n = 1; n <= 6; n++) {
      const claim = (await h.paperclip.services.claims.get(keyOf(`JS-1000${n}`)))!;
      const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
      assert.equal(record.verdict, 'confirmed', `JS-1000${n}`);
    }

    // The vendor's request log: its own limit never refused a call (the only 429s are the four forced ones), and no
    // 10 s window holds more of the clerk's JSON calls than the pace allows.
    const log = await h.control.timings();
    const refused = log.filter((t) => t.status === 429);
    assert.equal(refused.length, 4, JSON.stringify(refused));
    assert.ok(
      refused.every((t) => /\/portal\/api\/bills\/JS-1000[25]\b/.test(t.path)),
      JSON.stringify(refused),
    );
    for (let n = 1; n <= 6; n++) {
      const reads = log.filter((t) => t.method === 'GET' && t.path === `/portal/api/bills/JS-1000${n}` && t.status === 200);
      assert.ok(reads.length >= 2, `JS-1000${n}: its owner read at routing and its readback, ${reads.length} read(s)`);
    }
    const calls = log.filter((t) => t.identity === 'js-acme' && t.path.startsWith('/portal/api/')).map((t) => Date.parse(t.startedAt));
    const busiest = Math.max(...calls.map((start) => calls.filter((t) => t >= start && t < start + 10_000).length));
    assert.ok(busiest <= 24, `at most 24 JSON calls in any 10 s (the pace), the vendor saw ${busiest}`);

    // The count the product reports equals what the vendor's log says it refused: per item, per batch, everywhere.
    assert.equal(summary.rateLimited, refused.length, JSON.stringify(summary));
    assert.ok((summary.rateLimitWaitMs ?? 0) >= 4000, 'four Retry-After waits of 1 s sat out');
    const file = JSON.parse(
      (await h.paperclip.services.evidence.get(batchKey({ tenant: 'acme', taskId: task }, 'batch.json')))!.toString(),
    );
    assert.equal(file.rateLimited, refused.length, 'batch.json carries the count the report reads');
    const perItem = Object.fromEntries(
      (file.results as Array<{ billNo: string; rateLimited?: number }>).map((r) => [r.billNo, r.rateLimited ?? 0]),
    );
    assert.deepEqual(perItem, { 'JS-10001': 0, 'JS-10002': 2, 'JS-10003': 0, 'JS-10004': 0, 'JS-10005': 2, 'JS-10006': 0 });
    assert.equal((await h.paperclip.services.claims.get(keyOf('JS-10002')))?.rateLimited, 2);
    assert.match(summaryLine(summary), new RegExp(`"rate_limited":${refused.length}`));
    const page = (await h.paperclip.services.evidence.get(batchKey({ tenant: 'acme', taskId: task }, 'index.html')))?.toString() ?? '';
    assert.match(page, /rate limited \(429\) 4/);
  });
});

/**
 * The small chaos soak on Settlo, with the soak's own runner (chaos/soak.ts, as on the simulator and Ledgerly): its
 * own Settlo and a runner process on a data folder of its own, so it runs after the harness above has stopped. Each
 * of five bills gets one of the kit's faults, in turn, through Settlo's fault controls; two runners race on the same
 * keys, at concurrency 2 each, against Settlo's default rate limit; an operator pass retries what went to takeover.
 */
describe('Settlo: a small chaos soak', () => {
  test('half success, commit then timeout, 500, slow, session revoked, and the rate limit: every invariant holds', async () => {
    await soakEveryKitFault('settlo', {
      oneMutationPerKey: 'no bill settled twice',
      noFalseSuccess: 'no item done that Settlo does not show 已处理',
      noLostItem: 'every item settled, waiting in the takeover queue, or reported at routing',
    });
  });
});
