import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { probe } from '../../src/cli/probe.js';
import { runCheck } from '../../src/cli/sitepack.js';
import { idempotencyKey } from '../../src/domain/task.js';
import type { SettloControl } from '../../backoffices/settlo/control-client.js';
import { startSettloHarness, type Harness } from '../support/embedded.js';

/**
 * Paperclip on Settlo, the third back office (a legacy settlement portal: password then TOTP, the work area in
 * a frame, an AG Grid list, Shoelace dialogs, writes held in an undo window), through sitepacks/settlo.yaml
 * as written against today's reader: the list read at top level in the grid's paged view, and the write
 * waiting out the undo window on the page (docs/settlo.md).
 */
describe('Paperclip on Settlo', () => {
  let h: Harness<SettloControl>;
  before(async () => {
    h = await startSettloHarness();
  });
  after(async () => {
    await h?.stop();
  });

  const small = {
    seed: 5,
    allowTopLevelWork: true,
    undoWindowSeconds: 2,
    tenants: [
      { id: 'acme', pending: 12, overcharge: 1, processed: 2 },
      { id: 'globex', pending: 2, overcharge: 0, processed: 0 },
    ],
  };

  test('sitepack check: the pack and the local config are valid together', async () => {
    const lines: string[] = [];
    const code = await runCheck(['sitepacks/settlo.yaml', '--config', 'config/settlo.local.yaml'], (line) => lines.push(line));
    assert.equal(code, 0, lines.join('\n'));
    assert.match(lines.join('\n'), /config\/settlo\.local\.yaml: valid against settlo \(tenants acme, globex\)/);
  });

  test('probe: logs in with password and TOTP, reads every row over two grid pages, reads one item from every source alike; writes nothing', async () => {
    await h.control.reset(small);
    const out = mkdtempSync(join(tmpdir(), 'settlo-probe-'));
    try {
      const result = await probe(h.paperclip.services, { tenant: 'acme', item: 'JS-10001', out });
      assert.equal(result.ok, true, JSON.stringify({ listError: result.listError, readings: result.readings, loss: result.sessionLoss }));
      assert.equal(result.rows.length, 15, 'ten rows on the first page, five on the second');
      assert.deepEqual(
        result.rows.filter((r) => r.batch.action === 'settle').map((r) => r.billNo),
        Array.from({ length: 12 }, (_, i) => `JS-1${String(i + 1).padStart(4, '0')}`),
      );
      assert.equal(result.rows.find((r) => r.billNo === 'JS-10013')?.batch.action, 'refund');
      assert.equal(result.agree, true);
      for (const source of ['api', 'detail', 'list']) {
        assert.equal(result.readings.find((r) => r.source === source)?.status, 'PENDING', source);
      }
      assert.deepEqual(await h.control.journal(), []);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('a guarded 处理: through the row’s button and the Shoelace dialog, held in the undo window, sent once, confirmed by the API', async () => {
    await h.control.reset(small);
    const task = {
      taskId: 'T-settlo-settle',
      tenant: 'acme',
      billNo: 'JS-10002',
      action: 'settle',
      requestedBy: 'schedule',
      params: { note: '已由 Paperclip 对账核对' },
    };
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    const journal = await h.control.journal();
    assert.deepEqual(
      journal.map((e) => [e.billNo, e.action, e.identity, e.tenant, e.detail?.['after']]),
      [['JS-10002', 'settle', 'js-acme', 'acme', { status: 'PROCESSING', note: '已由 Paperclip 对账核对' }]],
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
});
