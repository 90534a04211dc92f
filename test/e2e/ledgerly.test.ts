import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startLedgerlyHarness, useHarness } from '../support/embedded.js';
import { approvalRequestFor, linkFromInbox, openLink, operatorsAlertAbout, postDecision, waitUntil } from '../approvals/helpers.js';
import { resolveTakeover } from '../../src/app/takeover/resolve.js';
import { runDrill } from '../../src/cli/drill.js';
import { packVariant, withPack } from '../support/pack-variants.js';

const REASON_DONE = "done: { target: { text: '{{reason}}', exact: true } }";
/** The pack with the reason stage's done check written as the label and value on one line, which Ledgerly never shows. */
const blindDone = packVariant(
  'sitepacks/ledgerly.yaml',
  REASON_DONE,
  "done: { target: { text: 'Resolution reason: {{reason}}', exact: true } }",
);
/** The pack whose resolve stops after saving the reason: its Resolve button has a name Ledgerly never shows. */
const resolveWithoutSecondStage = packVariant(
  'sitepacks/ledgerly.yaml',
  '- { action: click, target: { role: button, name: Resolve, exact: true }, commit: true }',
  '- { action: click, target: { role: button, name: Resolve now, exact: true }, commit: true }',
);

/**
 * The guarded path against Ledgerly, the second back office, through the pack
 * written from its docs alone (sitepacks/ledgerly.yaml): a hash-route SPA with
 * cards, a two-write resolve (reason saved in a role-less modal, then Resolve),
 * an async review, a typed-amount refund alertdialog behind a More menu, and a
 * cookie-authenticated JSON API as the readback and ownership source.
 */
describe('guarded writes on Ledgerly', () => {
  const h = useHarness(startLedgerlyHarness);

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
  /** The names of the objects in an item's evidence folder. */
  const evidenceOf = async (claim: { tenant: string; taskId: string; key: string }) => {
    const folder = evidenceKey(claim, '');
    return (await h.paperclip.services.evidence.list(folder)).map((object) => object.slice(folder.length));
  };
  const resolveTask = (billNo: string, taskId: string, tenant = 'acme') => ({
    taskId,
    tenant,
    billNo,
    action: 'resolve',
    requestedBy: 'schedule',
    params: { reason: 'Credit note issued by Paperclip reconciliation' },
  });
  /** `sitepack drill` of one acme bill. */
  const drill = (action: string, billNo: string, taskId: string) =>
    runDrill(h.paperclip.services, { tenant: 'acme', action, billNo, taskId });
  const refundTask = (billNo: string, taskId: string) => ({ ...resolveTask(billNo, taskId), action: 'refund', params: {} });

  const events = async (key: string, type: string) => (await h.paperclip.services.audit.events(key)).filter((e) => e.type === type);
  /** Saves a resolution reason the way Ledgerly's own page does (its JSON API, signed in as the org's user). */
  const saveReasonAsVendorUser = async (billNo: string, reason: string) => {
    const login = await fetch(`${h.sim.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'billing@acme.test', password: 'Ledgerly-acme-2026' }),
    });
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    const saved = await fetch(`${h.sim.url}/api/discrepancies/${billNo}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ resolution_reason: reason }),
    });
    assert.equal(saved.status, 200);
  };
  /** Approves the refund of an item as the acme finance lead, from the approval mail. */
  const approveRefund = async (key: string) => {
    const request = await approvalRequestFor(h, key);
    const link = await linkFromInbox(h, request.approvalId, 'finance.lead@acme.example');
    const form = await openLink(link);
    const decided = await postDecision(h, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.ok(decided.status < 400, decided.html.slice(0, 200));
  };

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
      const [pictured] = await events(claim.key, 'after_pictured');
      assert.equal(pictured?.data['settled'], true, `${billNo}: the after picture waited for Resolved, not the interim Under review`);
      const objects = await evidenceOf(claim);
      for (const name of ['before.png', 'after.png', 'trace.zip', 'record.json']) {
        assert.ok(objects.includes(name), `${billNo} has ${name}`);
      }
    }
    assert.deepEqual(await entries('N-7003', 'refund'), [], 'no refund before approval');

    const refund = refundTask('N-7003', 'T-ledgerly-batch');
    const key = idempotencyKey(refund);
    await approveRefund(key);
    const done = await waitUntil('the approved refund to close', async () => {
      const claim = await h.paperclip.services.claims.get(key);
      return claim && ['DONE', 'TAKEOVER'].includes(claim.status) ? claim : undefined;
    });
    assert.equal(done.status, 'DONE', 'refunded through the typed-amount dialog, confirmed after Refund pending');
    const refunds = await entries('N-7003', 'refund');
    assert.equal(refunds.length, 1);
    assert.ok(
      (await evidenceOf(done)).includes('before-commit.png'),
      'an irreversible write pictures the confirmation just before its commit click, trace or not',
    );
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
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(resolveTask('N-7001', 'T-ledgerly-half'))))!;
    assert.equal(claim.status, 'TAKEOVER');
    assert.ok(
      (await evidenceOf(claim)).includes('readback.png'),
      'a readback that is not confirmed pictures the item (its detail page: the verdict came from the API) for the person taking over',
    );
  });

  test('a revoked session at routing (401 from the API) fails the item loudly, before any browser, without a retry: operators alerted', async () => {
    await h.control.reset(small);
    await h.control.setFaults([{ kind: 'session_revoked', identity: 'billing@acme.test' }]);
    const browsers = h.paperclip.services.sessions.stats;
    const task = resolveTask('N-7002', 'T-ledgerly-revoked');
    const key = idempotencyKey(task);
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'error');
    assert.match(String(result.output['reason']), /SessionLostError.*answered 401.*session is gone/);
    assert.deepEqual(h.paperclip.services.sessions.stats, browsers);
    assert.equal(await h.paperclip.services.claims.get(key), undefined, 'never claimed');
    assert.deepEqual(await h.control.journal(), []);
    // No claim means no takeover entry, and a re-run of the batch skips the key: the failure is recorded and mailed here.
    const failed = await events(key, 'routing_failed');
    assert.equal(failed.length, 1, 'recorded once, no retry');
    assert.match(String(failed[0]?.data['reason']), /SessionLostError.*answered 401/);
    const alert = await operatorsAlertAbout(h, key, 5000);
    assert.match(alert.subject, /Routing failed: acme N-7002 resolve/);
    const mails = (await h.paperclip.stack.fetchEmails()).filter((m) => JSON.stringify(m).includes(key));
    assert.equal(mails.length, 1, 'operators mailed once');
  });

  test('a reason saved by a vendor user before the task: its done check matches unproven before the click; takeover naming the line', async () => {
    await h.control.reset(small);
    const task = resolveTask('N-7001', 'T-ledgerly-presaved');
    await saveReasonAsVendorUser('N-7001', task.params.reason);
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(
      String(result.output['reason']),
      /\(actions\.resolve\.tiers\.browser\.stages\[0\]\.done\) already matches before its click, and no earlier attempt of this write committed/,
    );
    const key = idempotencyKey(task);
    const [checked] = await events(key, 'stage_done_checked');
    assert.deepEqual(
      [checked?.data['when'], checked?.data['matched'], checked?.data['decision']],
      ['before_click', true, 'stop'],
      'the reading is in the audit chain',
    );
    assert.deepEqual(await events(key, 'stage_already_done'), [], 'not skipped on an unproven match');
    assert.equal((await entries('N-7001', 'edit')).length, 1, 'only the edit made before the task');
    assert.deepEqual(await entries('N-7001', 'resolve'), [], 'Resolve not pressed');
  });

  test('a write stopped between its stages: the operator retry skips the stage its claim proves and resolves; each write once', async () => {
    await h.control.reset(small);
    const task = resolveTask('N-7002', 'T-ledgerly-resume');
    const key = idempotencyKey(task);
    // The first attempt saves the reason, its done check sees it, and the write stops before Resolve (a button it cannot find).
    const first = await withPack(h.paperclip.services, resolveWithoutSecondStage, () => h.runTask(task));
    assert.equal(first.output['outcome'], 'takeover', String(first.output['reason']));
    const claim = (await h.paperclip.services.claims.get(key))!;
    assert.deepEqual(
      claim.stages?.map((m) => [m.stage, m.mark]),
      [['reason_saved', 'seen']],
      'the claim carries the committed stage and its verdict',
    );
    assert.equal((await entries('N-7002', 'edit')).length, 1);
    const retried = await resolveTakeover(
      h.paperclip.services,
      { key, as: 'retry', note: 'the reason shows; resolve it', operator: 'ops@acme.example' },
      { wait: true },
    );
    assert.equal(retried.retry?.outcome, 'done', String(retried.retry?.reason));
    assert.equal((await events(key, 'stage_already_done'))[0]?.data['stage'], 'reason_saved', 'proven by the first attempt: skipped');
    assert.equal((await entries('N-7002', 'edit')).length, 1, 'the reason saved once');
    assert.equal((await entries('N-7002', 'resolve')).length, 1, 'resolved once');
  });

  test('a done check that cannot see its own effect: saved once, takeover naming the line; an operator retry clicks nothing', async () => {
    await h.control.reset(small);
    const task = resolveTask('N-7001', 'T-ledgerly-unseen');
    const key = idempotencyKey(task);
    await withPack(h.paperclip.services, blindDone, async () => {
      const result = await h.runTask(task);
      assert.equal(result.output['outcome'], 'takeover');
      assert.match(
        String(result.output['reason']),
        /the done check of stage "reason_saved" \(actions\.resolve\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/,
      );
      assert.equal((await h.paperclip.services.claims.get(key))!.status, 'TAKEOVER');
      assert.deepEqual(
        (await events(key, 'stage_done_checked')).map((e) => [e.data['when'], e.data['matched'], e.data['decision']]),
        [
          ['before_click', false, 'click'],
          ['after_commit', false, 'stop'],
        ],
      );
      assert.deepEqual(
        (await h.paperclip.services.claims.get(key))!.stages?.map((m) => [m.stage, m.mark]),
        [['reason_saved', 'unseen']],
      );
      assert.equal((await h.control.journal()).length, 1, 'exactly one vendor write');

      const retried = await resolveTakeover(
        h.paperclip.services,
        { key, as: 'retry', note: 'try again', operator: 'ops@acme.example' },
        { wait: true },
      );
      assert.equal(retried.retry?.outcome, 'takeover');
      assert.match(
        String(retried.retry?.reason),
        /stages\[0\]\.done\) did not recognise its own effect after the stage committed in an earlier attempt/,
      );
      assert.equal((await h.control.journal()).length, 1, 'the operator retry clicked nothing: still one vendor write');
    });
  });

  test('sitepack drill fails on the blind done check naming the line; passes on the good pack, false then true, every source back', async () => {
    await h.control.reset(small);
    const failed = await withPack(h.paperclip.services, blindDone, () => drill('resolve', 'N-7001', 'T-ledgerly-drill-blind'));
    assert.equal(failed.drill, 'failed');
    assert.match(String(failed.reason), /actions\.resolve\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/);
    assert.deepEqual(failed.stages[0], {
      stage: 'reason_saved',
      line: 'actions.resolve.tiers.browser.stages[0].done',
      hasDone: true,
      doneBefore: false,
      doneAfter: false,
    });
    assert.deepEqual((await entries('N-7001', 'edit')).length, 1, 'stopped after the one write');
    assert.deepEqual(await entries('N-7001', 'resolve'), []);

    const passed = await drill('resolve', 'N-7002', 'T-ledgerly-drill-good');
    assert.equal(passed.drill, 'passed', JSON.stringify(passed));
    assert.deepEqual(
      passed.stages.map((p) => [p.stage, p.doneBefore, p.doneAfter]),
      [
        ['reason_saved', false, true],
        ['resolved', null, null],
      ],
    );
    assert.deepEqual(
      passed.sources.map((x) => [x.source, x.before, x.afterWrite, x.after]),
      [
        ['api', 'OPEN', 'RESOLVED', 'OPEN'],
        ['detail', 'OPEN', 'RESOLVED', 'OPEN'],
      ],
    );
  });

  test('sitepack drill of the irreversible refund: walked to the commit click, amount read, dialog pictured; nothing written', async () => {
    await h.control.reset(small);
    const result = await drill('refund', 'N-7003', 'T-ledgerly-drill-refund');
    assert.equal(result.drill, 'passed', JSON.stringify(result));
    assert.equal(result.mode, 'walk_to_commit');
    assert.match(result.walk?.steps.at(-1) ?? '', /click role=button name="Confirm refund".*found, not clicked/);
    assert.match(result.walk?.extracted['typed_amount'] ?? '', /^\d+\.\d{2}$/, "the vendor's own figure, read in the dialog");
    assert.ok(result.walk?.screenshot && (await h.paperclip.services.evidence.get(result.walk.screenshot)), 'the dialog pictured');
    assert.deepEqual(await h.control.journal(), [], 'nothing written');
  });

  test('commit then timeout on the reason save: the write may have landed, readback sees the reason saved but still Open; takeover naming the timeout, never done, Resolve never pressed', async () => {
    await h.control.reset(small);
    await h.control.setFaults([{ kind: 'commit_then_timeout', bill: 'N-7002', ms: 300, times: 1 }]);
    const task = resolveTask('N-7002', 'T-ledgerly-ctt-edit');
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(
      String(result.output['reason']),
      /^AmbiguousOutcomeError: write may have landed: step "wait_for text=.*": the target still shows on .*N-7002 after \d+ ms; readback: api still shows OPEN/,
    );
    assert.equal((await h.paperclip.services.claims.get(idempotencyKey(task)))!.status, 'TAKEOVER');
    assert.equal((await entries('N-7002', 'edit')).length, 1, 'the reason saved once');
    assert.deepEqual(await entries('N-7002', 'resolve'), [], 'Resolve not pressed after an unanswered save');
  });

  test('async review: readback decides only once the review has finished, never on Under review', async () => {
    await h.control.reset(small);
    await h.control.setFaults([{ kind: 'async_delay_ms', bill: 'N-7001', ms: 10_000 }]);
    const task = resolveTask('N-7001', 'T-ledgerly-review');
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'done', String(result.output['reason']));
    const key = idempotencyKey(task);
    const [readback] = await events(key, 'readback');
    const seen = readback?.data['seen'] as string[];
    // How many interim reads there were depends on the machine's speed; that none decided does not.
    assert.equal(seen.at(-1), 'RESOLVED', seen.join(', '));
    assert.deepEqual(new Set(seen.slice(0, -1)), new Set(seen.length > 1 ? ['UNDER_REVIEW'] : []), seen.join(', '));
    assert.equal(readback?.data['verdict'], 'confirmed');
    assert.equal((await events(key, 'after_pictured')).length, 1);
    assert.equal((await entries('N-7001', 'resolve')).length, 1);
  });

  test('session lost during the refund (the page gets 401 and goes to #/login): takeover naming the session loss, nothing refunded', async () => {
    await h.control.reset(small);
    const refund = refundTask('N-7003', 'T-ledgerly-refund-lost');
    const key = idempotencyKey(refund);
    const executionArn = await h.startTask(refund);
    await approvalRequestFor(h, key);
    // Approved while the session is revoked: the write's page loses it as it opens the refund.
    await h.control.setFaults([{ kind: 'session_revoked', bill: 'N-7003' }]);
    await approveRefund(key);
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(String(result.output['reason']), /SessionLostError/);
    assert.match(String(result.output['reason']), /#\/login|401|session/i);
    assert.equal((await h.paperclip.services.claims.get(key))!.status, 'TAKEOVER');
    assert.deepEqual(await entries('N-7003', 'refund'), [], 'nothing refunded, no retry');
  });
});
