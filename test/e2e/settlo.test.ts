import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { probe } from '../../src/cli/probe.js';
import { runCheck } from '../../src/cli/sitepack.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startSettloHarness, useHarness } from '../support/embedded.js';
import { runDrill } from '../../src/cli/drill.js';
import { packVariant, withPack } from '../support/pack-variants.js';
import { SETTLE_NOTE, settleTask, settloScenario } from '../support/settlo.js';

const UNDO_LINE = '    undoWindowSeconds: 5\n';
/** The pack as a user would write it before knowing about the undo window: 处理 without its undoWindowSeconds line. */
const settleWithoutUndoWindow = () => packVariant('sitepacks/settlo.yaml', UNDO_LINE, '');

/**
 * The pack with 处理 written as one stage whose done check looks for text Settlo never shows (the note as
 * "处理说明：…" in the row): a done check that cannot see its own effect.
 */
function settleWithBlindDoneCheck() {
  const text = readFileSync('sitepacks/settlo.yaml', 'utf8');
  const head = `${UNDO_LINE}    tiers:\n      browser:\n        steps:\n`;
  const start = text.indexOf(head) + head.length;
  const steps = text.slice(start, text.indexOf('\n\n', start) + 1);
  const staged =
    '        stages:\n' +
    '          - name: sent\n' +
    "            done: { within: { row: true }, target: { text: '处理说明：{{note}}', exact: true } }\n" +
    '            steps:\n' +
    steps.replace(/^ {10}/gm, '              ');
  return packVariant('sitepacks/settlo.yaml', `${head}${steps}`, `${UNDO_LINE}    tiers:\n      browser:\n${staged}`);
}
const BLIND_LINE =
  /the done check of stage "sent" \(actions\.settle\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/;

/**
 * Paperclip on Settlo, the third back office (a legacy settlement portal: password then TOTP, the work area in
 * a frame, an AG Grid list, Shoelace dialogs, writes held in an undo window), through sitepacks/settlo.yaml:
 * the list read in the portal's frame in the grid's scroll view, the writes declaring the undo window
 * (undoWindowSeconds), the GBK export a readback source, and the portal forbidding its work pages at top level
 * (allowTopLevelWork off, its default; docs/settlo.md).
 */
describe('Paperclip on Settlo', () => {
  const h = useHarness(startSettloHarness);

  const small = settloScenario(5, { acme: { pending: 12, overcharge: 1, processed: 2 }, globex: { pending: 2 } });

  test('sitepack check: the pack and the local config are valid together', async () => {
    const lines: string[] = [];
    const code = await runCheck(['sitepacks/settlo.yaml', '--config', 'config/settlo.local.yaml'], (line) => lines.push(line));
    assert.equal(code, 0, lines.join('\n'));
    assert.match(lines.join('\n'), /config\/settlo\.local\.yaml: valid against settlo \(tenants acme, globex\)/);
  });

  test('probe: password and TOTP, every row of the scrolling grid in the frame, one item alike from every source; writes nothing', async () => {
    await h.control.reset(small);
    const out = mkdtempSync(join(tmpdir(), 'settlo-probe-'));
    try {
      const result = await probe(h.paperclip.services, { tenant: 'acme', item: 'JS-10001', out });
      assert.equal(result.ok, true, JSON.stringify({ listError: result.listError, readings: result.readings, loss: result.sessionLoss }));
      assert.equal(result.rows.length, 15, 'every row of 共 15 条, though the grid draws only those in view');
      assert.deepEqual(
        result.rows.filter((r) => r.batch.action === 'settle').map((r) => r.billNo),
        Array.from({ length: 12 }, (_, i) => `JS-1${String(i + 1).padStart(4, '0')}`),
      );
      assert.equal(result.rows.find((r) => r.billNo === 'JS-10013')?.batch.action, 'refund');
      assert.equal(result.agree, true);
      for (const source of ['api', 'export', 'list']) {
        assert.equal(result.readings.find((r) => r.source === source)?.status, 'PENDING', source);
      }
      assert.deepEqual(await h.control.journal(), []);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('a guarded 处理: through the row’s button and the Shoelace dialog, held in the undo window, sent once, confirmed by the API', async () => {
    await h.control.reset(small);
    const task = settleTask({ taskId: 'T-settlo-settle', billNo: 'JS-10002' });
    assert.equal((await h.control.state()).controls.allowTopLevelWork, false, 'the work area only inside its frame');
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    const key = idempotencyKey(task);
    const [waited, ...more] = (await h.paperclip.services.audit.events(key)).filter((e) => e.type === 'undo_window_waited');
    assert.deepEqual([waited?.data['stage'], waited?.data['undoWindowSeconds'], more.length], ['write', 5, 0]);
    const journal = await h.control.journal();
    assert.deepEqual(
      journal.map((e) => [e.billNo, e.action, e.identity, e.tenant, e.detail?.['after']]),
      [['JS-10002', 'settle', 'js-acme', 'acme', { status: 'PROCESSING', note: SETTLE_NOTE }]],
    );
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(task)))!;
    assert.equal(claim.status, 'DONE');
    const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
    assert.equal(record.verdict, 'confirmed');
    assert.equal(record.readbackSource, 'api');
    assert.equal((await h.control.state()).bills.find((b) => b.billNo === 'JS-10002')?.status, 'PROCESSED');

    const again = await h.runTask(task);
    assert.notEqual(again.output['outcome'], 'takeover');
    assert.equal((await h.control.journal()).length, 1, 'the same task writes nothing a second time');
  });

  test('the pack without its undo-window line: the page closes inside the window, the write is dropped, takeover, never done', async () => {
    // A window well past the write step's own end, however slow the machine: the page is closed inside it.
    const windowSeconds = 12;
    await h.control.reset({ ...small, undoWindowSeconds: windowSeconds });
    const task = settleTask({ taskId: 'T-settlo-no-undo', billNo: 'JS-10003' });
    const result = await withPack(h.paperclip.services, settleWithoutUndoWindow(), () => h.runTask(task));
    assert.equal(result.output['outcome'], 'takeover', JSON.stringify(result.output));
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(task)))!;
    assert.equal(claim.status, 'TAKEOVER');
    const events = await h.paperclip.services.audit.events(claim.key);
    const clicked = events.find((e) => e.type === 'write_started');
    assert.ok(clicked, 'the commit click was made');
    assert.equal(events.filter((e) => e.type === 'undo_window_waited').length, 0);
    const readback = events.find((e) => e.type === 'readback');
    assert.notEqual(readback?.data['verdict'], 'confirmed', JSON.stringify(readback?.data));
    // The page that held the write is gone: once the window is over (and the moment the page would need to send),
    // the write is still held, never sent.
    await sleep(Math.max(0, Date.parse(clicked.at) + (windowSeconds + 3) * 1000 - Date.now()));
    const state = await h.control.state();
    assert.equal(state.pendingWrites, 1, 'held by the portal, neither sent nor undone');
    assert.equal(state.bills.find((b) => b.billNo === 'JS-10003')?.status, 'PENDING');
    assert.deepEqual(await h.control.journal(), []);
  });

  test('sitepack drill of 处理: written through the undo window, undone by 撤回 through it, every source back', async () => {
    await h.control.reset(small);
    const passed = await runDrill(h.paperclip.services, { tenant: 'acme', action: 'settle', billNo: 'JS-10004', taskId: 'T-settlo-drill' });
    assert.equal(passed.drill, 'passed', JSON.stringify(passed));
    assert.equal(passed.restored, true);
    assert.deepEqual(
      passed.sources.map((x) => [x.source, x.before, x.after]),
      [
        ['api', 'PENDING', 'PENDING'],
        ['export', 'PENDING', 'PENDING'],
      ],
    );
    assert.ok(
      passed.sources.every((x) => x.afterWrite === 'PROCESSED' || x.afterWrite === 'PROCESSING'),
      JSON.stringify(passed.sources),
    );
    assert.deepEqual(
      (await h.control.journal()).map((e) => [e.billNo, e.action]),
      [
        ['JS-10004', 'settle'],
        ['JS-10004', 'reopen'],
      ],
    );
    assert.equal((await h.control.state()).bills.find((b) => b.billNo === 'JS-10004')?.status, 'PENDING');
  });

  test('a done check that cannot see its own effect: 处理 sent once, takeover naming the line; drill fails on it', async () => {
    await h.control.reset(small);
    const blind = settleWithBlindDoneCheck();
    const task = settleTask({ taskId: 'T-settlo-blind-done', billNo: 'JS-10006' });
    const result = await withPack(h.paperclip.services, blind, () => h.runTask(task));
    assert.equal(result.output['outcome'], 'takeover', JSON.stringify(result.output));
    assert.match(String(result.output['reason']), BLIND_LINE);
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(task)))!;
    assert.equal(claim.status, 'TAKEOVER');
    assert.deepEqual(
      claim.stages?.map((m) => [m.stage, m.mark]),
      [['sent', 'unseen']],
    );
    assert.deepEqual(
      (await h.control.journal()).map((e) => [e.billNo, e.action]),
      [['JS-10006', 'settle']],
      'exactly one vendor write',
    );

    const drilled = await withPack(h.paperclip.services, blind, () =>
      runDrill(h.paperclip.services, { tenant: 'acme', action: 'settle', billNo: 'JS-10007', taskId: 'T-settlo-drill-blind' }),
    );
    assert.equal(drilled.drill, 'failed', JSON.stringify(drilled));
    assert.match(String(drilled.reason), /actions\.settle\.tiers\.browser\.stages\[0\]\.done\) does not recognise its own effect/);
    assert.deepEqual(
      (await h.control.journal()).filter((e) => e.billNo === 'JS-10007').map((e) => e.action),
      ['settle'],
      'the drill stopped after its one write',
    );
  });
});
