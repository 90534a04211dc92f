import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startHarness, useHarness } from '../support/embedded.js';

/**
 * The simulator in its portal layout (a top bar and menu, every work page inside an iframe named "work", a work page
 * opened at the top of a tab sent to the portal around it), driven end to end through the embedded stack by the
 * simulator's own pack with one change: the list, the detail page and the actions name their frame. The batch reads
 * the list in the frame, each guarded write acts in it and is read back from it, and the simulator's journal proves
 * one write per bill.
 */
function portalConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-portal-'));
  const pack = parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as {
    list: Record<string, unknown>;
    detail: Record<string, unknown>;
    actions: Record<string, Record<string, unknown>>;
  };
  const frame = { name: 'work' };
  pack.list['frame'] = frame;
  pack.detail['frame'] = frame;
  for (const action of Object.values(pack.actions)) action['frame'] = frame;
  const packPath = join(dir, 'vendor-sim-portal.yaml');
  writeFileSync(packPath, stringify(pack));
  const config = readFileSync('config/paperclip.local.yaml', 'utf8').replace(/site_pack: .*/, `site_pack: ${packPath}`);
  const configPath = join(dir, 'paperclip.portal.yaml');
  writeFileSync(configPath, config);
  return configPath;
}

describe('a back office whose work area is an iframe of a portal', () => {
  const h = useHarness(() => startHarness({ layout: 'portal', configPath: portalConfig() }));

  test('a batch reads the list in the frame and writes each pending bill once, done and journal-proven', async () => {
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 1 }] });
    const run = await h.paperclip.runBatch({ taskId: 'T-e2e-portal', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.read, 4, 'every row of the framed list was read');
    assert.equal(run.summary?.counts.done, 3);
    const marks = (await h.control.journal()).filter((e) => e.action === 'mark');
    assert.equal(marks.length, 3);
    assert.equal(new Set(marks.map((e) => e.billNo)).size, 3, 'one vendor write per bill');
    const claims = await h.paperclip.services.claims.byTask('T-e2e-portal');
    assert.deepEqual(
      claims.map((c) => c.status),
      ['DONE', 'DONE', 'DONE'],
    );
    const state = await h.control.state();
    assert.equal(state.bills.filter((b) => b.tenant === 'acme' && b.status === 'PROCESSED').length, 4);
  });
});
