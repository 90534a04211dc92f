import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runPaperclipSource } from '../support/processes.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compensate } from '../../src/app/compensation.js';
import { compensatesOf } from '../../src/evidence/item-page.js';
import { batchKey } from '../../src/app/ports/evidence.js';
import { verifyBatch } from '../../src/evidence/verify.js';
import { buildReport } from '../../src/report/collect.js';
import { startHarness, type Harness } from '../support/embedded.js';

/**
 * The report after a real batch of 3 pending bills (one "toast but nothing
 * changed" write that goes to takeover) and one compensation by an operator,
 * checked against the simulator's journal: the vendor's own record of what
 * was mutated.
 */
const TASK = 'T-report-metrics';

describe('paperclip report', () => {
  let h: Harness;
  let out: string;

  before(async () => {
    h = await startHarness();
    out = mkdtempSync(join(tmpdir(), 'paperclip-report-'));
    await h.control.reset({ seed: 21, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
    await h.control.addFault({ kind: 'half_success', bill: 'ACME-202611-0002', times: 1 });
    const run = await h.paperclip.runBatch({ taskId: TASK, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    const first = (await h.paperclip.services.claims.byTask(TASK)).find((c) => c.billNo === 'ACME-202611-0001')!;
    const undone = await compensate(h.paperclip.services, {
      key: first.key,
      requestedBy: 'ops.lead@acme.example',
      reason: 'marked by mistake',
    });
    assert.equal(undone.rolledBack, true, undone.outcome);
  });
  after(async () => {
    await h?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  test('counts match the vendor journal: done == marks, rollbacks == unmarks, one takeover, no misoperation', async () => {
    const journal = await h.control.journal();
    const marks = journal.filter((e) => e.action === 'mark');
    const unmarks = journal.filter((e) => e.action === 'unmark');
    const report = await buildReport(h.paperclip.services, { since: new Date(Date.now() - 3_600_000), tenant: 'acme' });
    assert.equal(report.items, 3, 'three bills, the compensation run is not an item');
    assert.equal(report.outcomes.done, marks.length);
    assert.equal(marks.length, 2, 'the half-successful write left no mark');
    assert.equal(report.outcomes.takeover, 1);
    assert.equal(report.compensationRuns, 1);
    assert.deepEqual(report.rollback, { attempted: 1, succeeded: unmarks.length });
    assert.deepEqual(report.rates.rollbackSuccess, { count: 1, of: 1, rate: 1 });
    assert.deepEqual(report.rates.completion, { count: 2, of: 3, rate: 2 / 3 });
    assert.deepEqual(report.rates.takeover, { count: 1, of: 3, rate: 1 / 3 });
    assert.equal(report.writeAttempts, 4, 'three writes and the inverse reached a commit');
    assert.equal(report.commits, journal.length + 1, 'every commit is in the journal but the half-successful one');
    assert.deepEqual(report.rates.misoperation, { count: 0, of: 4, rate: 0 });
    assert.equal(report.falseSuccessCaught, 1);
    const batch = report.batches.find((b) => b.task === TASK)!;
    assert.equal(batch.counts['done'], 2);
    assert.equal(batch.counts['takeover'], 1);

    const later = await buildReport(h.paperclip.services, { since: new Date(Date.now() + 3_600_000) });
    assert.equal(later.items, 0);
    assert.equal(later.rates.completion.rate, null, 'no rate without items, not 0 %');
  });

  test('the CLI prints the table and writes an HTML page with an inline chart and nothing external', async () => {
    const html = join(out, 'report.html');
    const run = await runPaperclipSource(['report', '--since', '24h', '--tenant', 'acme', '--html', html], {
      PAPERCLIP_DYNAMODB_ENDPOINT: h.paperclip.stack.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: h.paperclip.stack.endpoints.s3,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /misoperation rate +0 +4 +0\.0%/);
    assert.match(run.stdout, /task completion rate +2 +3 +66\.7%/);
    assert.match(run.stdout, /human takeover rate +1 +3 +33\.3%/);
    assert.match(run.stdout, /rollback success rate +1 +1 +100\.0%/);
    assert.match(run.stdout, /outcomes: done 2, takeover 1/);
    assert.match(run.stdout, new RegExp(`${TASK} +acme`));
    const page = readFileSync(html, 'utf8');
    assert.match(page, /<svg role="img"/);
    assert.match(page, /任务完成率 Task completion rate/);
    assert.doesNotMatch(page, /<script|<link|@import|url\(|src=/i, 'nothing loaded from anywhere');
    assert.deepEqual(page.match(/https?:\/\/[^"'\s<]+/g)?.filter((u) => u !== 'http://www.w3.org/2000/svg') ?? [], []);
  });

  test('a compensation after the seal is added to it: the batch still verifies clean and links the inverse', async () => {
    const s = h.paperclip.services;
    const result = await verifyBatch(s, { tenant: 'acme', taskId: TASK });
    assert.deepEqual(result.findings, []);
    const chain = await s.audit.events(`batch:acme:${TASK}`);
    // One addition for the inverse when it closed, one for the undone write's page and its new events.
    assert.deepEqual(
      chain.map((e) => e.type),
      ['sealed', 'item_sealed', 'item_sealed'],
    );
    const claims = await s.claims.byTask(TASK);
    const inverse = claims.find((c) => c.action === 'unmark_processed')!;
    assert.equal(inverse.status, 'DONE');
    const sealedKeys = chain.slice(1).map((e) => (e.data['items'] as Array<{ key: string }>).map((i) => i.key));
    const undone = compensatesOf(await s.audit.events(inverse.key));
    assert.deepEqual(sealedKeys, [[inverse.key], [undone]]);
    const page = (await s.evidence.get(batchKey({ tenant: 'acme', taskId: TASK }, 'index.html')))!.toString();
    assert.ok(page.includes(`${inverse.key}/index.html`), 'the batch page links the compensation run');
    assert.match(page, /补偿 undoes/);
  });
});
