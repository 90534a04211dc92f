import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { batchKey, evidenceKey } from '../../src/app/ports/evidence.js';
import { finishBatchEvidence } from '../../src/evidence/batch-end.js';
import { parseSeal, type SealedItem } from '../../src/evidence/seal.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { useHarness } from '../support/embedded.js';
import { readZip } from '../../src/lib/zip.js';
import { loadSitePack } from '../../src/sitepack/load.js';
import { resolveTakeover } from '../../src/app/takeover/resolve.js';
import { runDrill } from '../../src/cli/drill.js';
import { packVariant, withPack } from '../support/pack-variants.js';

/** The simulator's pack with mark_processed as one stage whose done check looks for a text the simulator never shows. */
function blindMarkPack() {
  const pack = structuredClone(loadSitePack('sitepacks/vendor-sim.yaml'));
  const browser = pack.actions['mark_processed']!.tiers.browser!;
  browser.stages = [
    { name: 'marked', steps: browser.steps!, done: { within: { row: true }, target: { text: '已处理完毕', exact: true } } },
  ];
  delete browser.steps;
  return pack;
}

/**
 * The guarded write path end to end: the real ASL on the local Step Functions
 * endpoint, real Chromium against the simulator, DynamoDB through dynalite and
 * S3 through s3rver. Outcomes are read from the simulator's journal, the claim
 * table and the evidence bucket.
 */
describe('guarded write path on the embedded stack', () => {
  const h = useHarness();

  const pendingOnly = {
    seed: 7,
    tenants: [
      { id: 'acme', pending: 12, overcharge: 0, processed: 2 },
      { id: 'globex', pending: 2, overcharge: 0, processed: 0 },
    ],
  };
  const marks = async () => (await h.control.journal()).filter((e) => e.action === 'mark');

  test('a done check that cannot see its own effect: marked once, takeover naming the line; an operator retry and the drill click nothing more', async () => {
    await h.control.reset(pendingOnly);
    const [bill] = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.status === 'PENDING');
    const task = {
      taskId: 'T-e2e-blind-done',
      tenant: 'acme',
      billNo: bill!.billNo,
      action: 'mark_processed',
      requestedBy: 'schedule',
      params: {},
    };
    const key = idempotencyKey(task);
    await withPack(h.paperclip.services, blindMarkPack(), async () => {
      const result = await h.runTask(task);
      assert.equal(result.output['outcome'], 'takeover');
      assert.match(
        String(result.output['reason']),
        /the done check of stage "marked" \(actions\.mark_processed\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/,
      );
      assert.equal((await marks()).length, 1, 'exactly one vendor write');
      const retried = await resolveTakeover(
        h.paperclip.services,
        { key, as: 'retry', note: 'again', operator: 'ops@acme.example' },
        { wait: true },
      );
      assert.notEqual(retried.retry?.outcome, undefined);
      assert.equal((await marks()).length, 1, 'the operator retry clicked nothing: still one vendor write');
      const drill = await runDrill(h.paperclip.services, { tenant: 'acme', taskId: 'T-e2e-blind-drill' });
      assert.equal(drill.drill, 'failed');
      assert.match(String(drill.reason), /actions\.mark_processed\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/);
      assert.equal((await marks()).length, 2, 'the drill stopped after its one write');
    });
    const good = await runDrill(h.paperclip.services, { tenant: 'acme', taskId: 'T-e2e-good-drill' });
    assert.equal(good.drill, 'passed', JSON.stringify(good));
    assert.ok(
      good.sources.every((x) => x.afterWrite === 'PROCESSED' && x.after === 'PENDING'),
      JSON.stringify(good.sources),
    );
  });

  test('sitepack drill of the irreversible refund walks to its commit click and clicks nothing', async () => {
    await h.control.reset();
    const [bill] = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.status === 'PENDING' && b.kind === 'overcharge');
    const result = await runDrill(h.paperclip.services, {
      tenant: 'acme',
      action: 'refund',
      billNo: bill!.billNo,
      taskId: 'T-e2e-drill-refund',
      params: { amount: (bill!.amountCents / 100).toFixed(2), reason: 'drill' },
    });
    assert.equal(result.drill, 'passed', JSON.stringify(result));
    assert.match(result.walk?.steps.at(-1) ?? '', /found, not clicked/);
    // The steps are listed with the values they ran with, as in every error, never with {{billNo}} left in them.
    assert.ok(
      result.walk?.steps.some((step) => step.includes(bill!.billNo)),
      JSON.stringify(result.walk?.steps),
    );
    assert.ok(!result.walk?.steps.some((step) => step.includes('{{')), JSON.stringify(result.walk?.steps));
    assert.equal(result.walk?.settledBeforeCommit, false, 'the refund is not shown settled before its click');
    assert.deepEqual(await h.control.journal(), [], 'nothing written');
  });

  test('sitepack drill fails an irreversible action whose settled check holds before its commit click, clicking nothing', async () => {
    await h.control.reset();
    const [bill] = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.status === 'PENDING' && b.kind === 'overcharge');
    // A text every page shows anyway (the menu's 退款记录): the after picture's wait would end before the refund shows.
    const loose = packVariant('sitepacks/vendor-sim.yaml', 'target: { text: 已退款, exact: true }', 'target: { text: 退款 }');
    const result = await withPack(h.paperclip.services, loose, () =>
      runDrill(h.paperclip.services, {
        tenant: 'acme',
        action: 'refund',
        billNo: bill!.billNo,
        taskId: 'T-e2e-drill-refund-loose-settled',
        params: { amount: (bill!.amountCents / 100).toFixed(2), reason: 'drill' },
      }),
    );
    assert.equal(result.drill, 'failed', JSON.stringify(result));
    assert.equal(result.walk?.settledBeforeCommit, true);
    assert.match(String(result.reason), /actions\.refund\.tiers\.browser\.settled already holds before the commit click/);
    assert.deepEqual(await h.control.journal(), [], 'nothing written');
  });

  test('a batch of 12 pending bills: 12 done, exactly 12 vendor mutations, full evidence per item', async () => {
    await h.control.reset(pendingOnly);
    const run = await h.paperclip.runBatch({ taskId: 'T-e2e-first', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.read, 14);
    assert.equal(run.summary?.counts.done, 12);
    const journal = await marks();
    assert.equal(journal.length, 12);
    assert.equal(new Set(journal.map((e) => e.billNo)).size, 12, 'one mutation per bill');
    assert.ok(
      journal.every((e) => e.identity === 'svc-recon-acme'),
      'attributable to the tenant identity',
    );
    const state = await h.control.state();
    assert.equal(state.bills.filter((b) => b.tenant === 'acme' && b.status === 'PROCESSED').length, 14);

    const claims = await h.paperclip.services.claims.byTask('T-e2e-first');
    assert.equal(claims.length, 12);
    assert.ok(claims.every((c) => c.status === 'DONE'));
    for (const claim of claims) {
      const objects = await h.paperclip.services.evidence.list(evidenceKey(claim, ''));
      for (const name of ['before.png', 'after.png', 'trace.zip', 'record.json']) {
        assert.ok(objects.includes(evidenceKey(claim, name)), `${claim.billNo} has ${name}`);
      }
      // By the default evidence policy: the trace's snapshot of the commit click, and the confirmed readback's observations.
      for (const name of ['before-commit.png', 'readback.png']) {
        assert.ok(
          !objects.includes(evidenceKey(claim, name)),
          `${claim.billNo}: no ${name} for a traced reversible write read back confirmed`,
        );
      }
      const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
      assert.equal(record.verdict, 'confirmed');
      assert.equal(record.identity, 'svc-recon-acme');
      assert.equal(record.key, claim.key);
      const recorded = (record.evidence as Array<{ key: string }>).map((e) => e.key.slice(e.key.lastIndexOf('/') + 1)).sort();
      assert.deepEqual(
        recorded,
        ['after.png', 'before.png', 'trace.zip'],
        'every evidence object of the write and the readback is recorded, each once (the trace is stored once, early or at close)',
      );
      const trace = readZip((await h.paperclip.services.evidence.get(evidenceKey(claim, 'trace.zip')))!);
      const traced = [...trace.values()].map((b) => b.toString('latin1')).join('\n');
      assert.ok(traced.includes(claim.billNo), 'the trace recorded the write (the search below can find text)');
      // What before-commit.png would have shown: the trace's DOM snapshot taken before the commit click, with the dialog open.
      const actions = trace
        .get('trace.trace')!
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map(
          (line) =>
            JSON.parse(line) as {
              type: string;
              params?: unknown;
              beforeSnapshot?: string;
              snapshot?: { snapshotName?: string; html?: unknown };
            },
        );
      const commitClick = actions.find((e) => e.type === 'before' && e.beforeSnapshot && JSON.stringify(e.params ?? {}).includes('确认'));
      // One snapshot per frame; the page's own frame shows the dialog.
      const beforeCommit = actions.filter((e) => e.type === 'frame-snapshot' && e.snapshot?.snapshotName === commitClick?.beforeSnapshot);
      assert.ok(beforeCommit.length > 0, `${claim.billNo}: the trace has a snapshot before the commit click`);
      assert.ok(
        beforeCommit.some((e) => /"role":"dialog"/.test(JSON.stringify(e.snapshot?.html))),
        `${claim.billNo}: the snapshot before the commit click shows the confirmation dialog`,
      );
      assert.ok(!traced.includes('pw-acme-2026'), 'the trace holds no password');
      const network = trace.get('trace.network')!.toString('utf8');
      assert.match(network, /"name":"sid","value":"\[redacted\]"/, 'the session cookie was recorded and redacted');
      assert.doesNotMatch(network, /"name":"sid","value":"(?!\[redacted\])/);
    }
  });

  test('the batch is sealed on the enforcing twin: traces by the checksum recorded at upload, never read by the sealing role', async () => {
    // The bucket policy denies GetObject on *trace.zip to all but the auditor, and GetObjectAttributes needs GetObject:
    // a seal that hashed traces by reading them failed here before any page or seal was written.
    const batch = { tenant: 'acme', taskId: 'T-e2e-first' };
    const { seal, problem } = parseSeal(await h.paperclip.services.evidence.get(batchKey(batch, 'seal.json')));
    assert.ok(seal, `seal.json: ${problem}`);
    assert.equal(seal.unreadable, undefined, JSON.stringify(seal.unreadable));
    assert.ok(await h.paperclip.services.evidence.exists(batchKey(batch, 'index.html')), 'the batch page');
    const done = (await h.paperclip.services.claims.byTask('T-e2e-first')).filter((c) => c.status === 'DONE');
    assert.equal(done.length, 12);
    for (const claim of done) {
      const item: SealedItem | undefined = seal.items.find((i) => i.key === claim.key);
      const trace: SealedItem['objects'][number] | undefined = item?.objects.find((o) => o.name === 'trace.zip');
      const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString('utf8')) as {
        evidence: Array<{ key: string; sha256: string }>;
      };
      const recorded = record.evidence.find((e) => e.key === evidenceKey(claim, 'trace.zip'));
      assert.ok(trace && recorded, `${claim.billNo}: the trace is sealed and recorded`);
      assert.equal(trace.sha256, recorded.sha256, `${claim.billNo}: sealed with the checksum recorded at upload`);
      assert.ok(
        item?.objects.some((o) => o.name === 'index.html'),
        `${claim.billNo}: the item page is sealed`,
      );
    }
  });

  test('an object the sealing role may not read and no record lists is a finding in the seal, not a dropped seal', async () => {
    const batch = { tenant: 'acme', taskId: 'T-e2e-first' };
    const [first] = (await h.paperclip.services.claims.byTask('T-e2e-first')).filter((c) => c.status === 'DONE');
    // A trace no record.json or audit event lists (written here as the operator): a trace is never read to seal it, and the
    // bucket policy would keep summarize-batch from reading it anyway.
    const stray = evidenceKey(first!, 'extra-trace.zip');
    await h.paperclip.services.evidence.put(stray, 'not listed anywhere', 'application/zip');
    // As the handler runs it: summarize-batch's role reaches the batch's evidence only through the tenant's session.
    const finished = await h.paperclip.iam.runAsFunction('summarize-batch', () =>
      finishBatchEvidence(h.paperclip.services.forTenant({ tenant: batch.tenant }), batch, 'test'),
    );
    assert.deepEqual(
      finished.seal.unreadable?.map((u) => u.name),
      [`${first!.key}/extra-trace.zip`],
    );
    assert.match(finished.seal.unreadable![0]!.reason, /a trace no record.json or audit event lists: it is never read to seal it/);
    const stored = parseSeal(await h.paperclip.services.evidence.get(batchKey(batch, 'seal.json'))).seal;
    assert.equal(stored?.sealHash, finished.seal.sealHash, 'the seal was written, with the finding');
  });

  test('running the same task again mutates nothing and reports each item as the first run settled it', async () => {
    const run = await h.paperclip.runBatch({ taskId: 'T-e2e-first', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.skipped, 0);
    assert.equal(run.summary?.counts.done, 12, 'each item by its real outcome');
    assert.equal(run.summary?.settledEarlier, 12, 'settled by the earlier run, not this one');
    assert.equal((await marks()).length, 12, 'journal still 12');
  });

  test('a stale read that shows the bills pending again changes nothing: every key is already claimed', async () => {
    // Put the bills back to pending on the vendor side, as if a read were repeated before the vendor settled.
    await h.control.reset(pendingOnly);
    const run = await h.paperclip.runBatch({ taskId: 'T-e2e-first', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.done, 12);
    assert.equal(run.summary?.settledEarlier, 12);
    assert.equal((await marks()).length, 0, 'no click for a key that was already done');
  });

  test('two batches of the same task started at once write each bill exactly once', async () => {
    await h.control.reset(pendingOnly);
    const [a, b] = await Promise.all([
      h.paperclip.runBatch({ taskId: 'T-e2e-concurrent', tenant: 'acme' }),
      h.paperclip.runBatch({ taskId: 'T-e2e-concurrent', tenant: 'acme' }),
    ]);
    assert.equal(a.status, 'SUCCEEDED', a.error);
    assert.equal(b.status, 'SUCCEEDED', b.error);
    const journal = await marks();
    assert.equal(journal.length, 12);
    assert.equal(new Set(journal.map((e) => e.billNo)).size, 12);
    const done = (a.summary?.counts.done ?? 0) + (b.summary?.counts.done ?? 0);
    const skipped = (a.summary?.counts.skipped ?? 0) + (b.summary?.counts.skipped ?? 0);
    assert.equal(done + skipped, 24);
    assert.ok(done >= 12, 'every key done by one of the runners');
  });

  test('evidence set to always: a confirmed write keeps the page before its commit click and its readback page too', async () => {
    await h.control.reset(pendingOnly);
    // The handlers run in this process and read the one Services config: the setting applies to the next execution.
    const evidence = h.paperclip.services.config.evidence;
    const policy = { readback: evidence.readback_picture, beforeCommit: evidence.before_commit_picture };
    evidence.readback_picture = 'always';
    evidence.before_commit_picture = 'always';
    try {
      const task = { taskId: 'T-e2e-pictures', tenant: 'acme', billNo: 'ACME-202611-0003', action: 'mark_processed' };
      const result = await h.runTask(task);
      assert.equal(result.output['outcome'], 'done');
      const claim = (await h.paperclip.services.claims.get(idempotencyKey(task)))!;
      const objects = await h.paperclip.services.evidence.list(evidenceKey(claim, ''));
      for (const name of ['before.png', 'before-commit.png', 'after.png', 'readback.png', 'trace.zip'])
        assert.ok(objects.includes(evidenceKey(claim, name)), `${name} stored`);
      const [readback] = (await h.paperclip.services.audit.events(claim.key)).filter((e) => e.type === 'readback');
      assert.equal(readback?.data['verdict'], 'confirmed');
      assert.deepEqual(
        ((readback?.data['evidence'] ?? []) as Array<{ key: string }>).map((e) => e.key),
        [evidenceKey(claim, 'readback.png')],
      );
    } finally {
      evidence.readback_picture = policy.readback;
      evidence.before_commit_picture = policy.beforeCommit;
    }
  });

  test('an untraced reversible write keeps the picture before its commit click: no trace records that click', async () => {
    await h.control.reset(pendingOnly);
    const evidence = h.paperclip.services.config.evidence;
    const traced = evidence.write_trace;
    evidence.write_trace = false;
    try {
      const task = { taskId: 'T-e2e-untraced', tenant: 'acme', billNo: 'ACME-202611-0004', action: 'mark_processed' };
      assert.equal((await h.runTask(task)).output['outcome'], 'done');
      const claim = (await h.paperclip.services.claims.get(idempotencyKey(task)))!;
      const objects = await h.paperclip.services.evidence.list(evidenceKey(claim, ''));
      assert.ok(!objects.includes(evidenceKey(claim, 'trace.zip')), 'not traced');
      assert.ok(objects.includes(evidenceKey(claim, 'before-commit.png')), 'the commit click is pictured instead');
    } finally {
      evidence.write_trace = traced;
    }
  });

  test('a bill of another tenant is rejected at routing, before any browser opens', async () => {
    await h.control.reset(pendingOnly);
    const before = await h.control.timings();
    const result = await h.runTask({ taskId: 'T-e2e-scope', tenant: 'acme', billNo: 'GLOBEX-202611-0001', action: 'mark_processed' });
    assert.equal(result.output['outcome'], 'rejected');
    assert.match(String(result.output['reason']), /GLOBEX-202611-0001.*(not visible|belongs)/);
    assert.deepEqual(await h.control.journal(), []);
    const pages = (await h.control.timings()).slice(before.length).filter((t) => !t.path.startsWith('/api/'));
    assert.deepEqual(pages, [], 'no page of the back office was loaded');
  });

  for (const billNo of ['ACME-202611-0001"] , tr[data-bill', "ACME-202611-0001' or '1'='1", 'css=.row >> nth=0']) {
    test(`an injection-shaped bill number is rejected with a clear message: ${billNo}`, async () => {
      const before = await h.control.timings();
      const result = await h.runTask({ taskId: 'T-e2e-inject', tenant: 'acme', billNo, action: 'mark_processed' });
      assert.equal(result.output['outcome'], 'rejected');
      assert.match(String(result.output['reason']), /billNo .* is not a bill number of vendor-sim/);
      assert.deepEqual(await h.control.journal(), []);
      assert.deepEqual((await h.control.timings()).slice(before.length), [], 'the vendor was not contacted at all');
    });
  }

  test('the tool ladder picks the api tier where the action has one: one note, verified by a separate read, deduplicated', async () => {
    await h.control.reset(pendingOnly);
    const note = {
      taskId: 'T-e2e-note',
      tenant: 'acme',
      billNo: 'ACME-202611-0003',
      action: 'add_note',
      params: { note: '已与客户核对，差异为运费' },
    };
    const first = await h.runTask(note);
    assert.equal(first.output['outcome'], 'done');
    const again = await h.runTask(note);
    assert.equal(again.output['outcome'], 'skipped');
    const notes = (await h.control.journal()).filter((e) => e.action === 'note');
    assert.equal(notes.length, 1);
    assert.equal(notes[0]?.via, 'api');
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(note)))!;
    const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
    assert.equal(record.tier, 'api');
    assert.equal(record.verdict, 'confirmed');
    assert.ok(await h.paperclip.services.evidence.get(evidenceKey(claim, 'api-exchange.json')));
  });

  test('unknown tenant and unknown action are rejected with the field named', async () => {
    await h.control.reset(pendingOnly);
    const tenant = await h.runTask({ taskId: 'T-e2e-bad', tenant: 'umbrella', billNo: 'ACME-202611-0001', action: 'mark_processed' });
    assert.match(String(tenant.output['reason']), /tenant "umbrella" is not configured/);
    const action = await h.runTask({ taskId: 'T-e2e-bad', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'delete_everything' });
    assert.match(String(action.output['reason']), /action "delete_everything" is not enabled/);
    const malformed = await h.runTask({ taskId: 'nope', tenant: 'acme' });
    assert.match(String(malformed.output['reason']), /task\.taskId/);
    assert.deepEqual(await h.control.journal(), []);
  });
});
