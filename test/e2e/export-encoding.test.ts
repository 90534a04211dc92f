import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { localConfigVariant } from '../support/config-variant.js';
import { startHarness, type Harness } from '../support/embedded.js';

/**
 * A readback that trusts only the vendor's export, served as a legacy Chinese system does: GBK without a
 * byte-order mark, Chinese column names and status labels (the simulator's `encoding=gbk&labels=zh`). With
 * `export.encoding: gbk` the write is confirmed from that file alone, and the journal holds exactly that write.
 */
const configWithGbkExport = () =>
  localConfigVariant('gbk-export', {
    pack: (pack) => {
      pack['export'] = {
        url: '/settlement.csv?tenant={{tenant}}&encoding=gbk&labels=zh',
        encoding: 'gbk',
        keyColumn: '单号',
        statusColumn: '状态',
        ownerColumn: '租户',
      };
    },
    config: (config) => {
      config['write_policy']['readback_sources'] = ['export'];
    },
  });

describe('a GBK export as the only readback source, on the embedded stack', () => {
  const config = configWithGbkExport();
  let h: Harness;
  before(async () => {
    h = await startHarness({ configPath: config.path });
    await h.control.reset({ seed: 7, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
  });
  after(async () => {
    await h?.stop();
    config.remove();
  });

  test('the write is confirmed from the GBK file; the journal holds exactly that write', async () => {
    const task = { taskId: 'T-gbk-export', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'mark_processed' };
    const result = await h.runTask(task);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));

    const marks = (await h.control.journal()).filter((e) => e.action === 'mark');
    assert.deepEqual(
      marks.map((e) => [e.billNo, e.identity]),
      [['ACME-202611-0001', 'svc-recon-acme']],
    );
    const state = await h.control.state();
    assert.equal(state.bills.find((b) => b.billNo === 'ACME-202611-0001')?.status, 'PROCESSED');

    const exports = (await h.control.timings()).filter((t) => t.path.startsWith('/settlement.csv?tenant=acme&encoding=gbk&labels=zh'));
    assert.ok(exports.length >= 1 && exports.every((t) => t.status === 200), JSON.stringify(exports));

    const [claim] = await h.paperclip.services.claims.byTask('T-gbk-export');
    assert.equal(claim?.key, idempotencyKey(task));
    const record = JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim!, 'record.json')))!.toString());
    assert.equal(record.verdict, 'confirmed');
    assert.equal(record.readbackSource, 'export');
  });
});
