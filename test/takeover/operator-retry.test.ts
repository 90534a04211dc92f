import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parse, stringify } from 'yaml';
import { batchKey, evidenceKey } from '../../src/adapters/s3/evidence-store.js';
import { verifyBatch } from '../../src/evidence/verify.js';
import { executeTakeover, parseTakeoverArgs, type Io } from '../../src/cli/takeover.js';
import { startHarness, type Harness } from '../support/embedded.js';

/**
 * An operator's retry of a takeover item, on a vendor that applies a change
 * slowly and shows the old state until it has (no interim status): real
 * Chromium against the simulator, the real workflow on the embedded stack.
 * The simulator's interim 处理中 is read as the old state (待处理) by this
 * test's copy of the pack, as such a vendor would show it.
 */
const SETTLE_WINDOW_MS = 12_000;

describe('operator retry', () => {
  let h: Harness;
  let dir: string;
  const operator = 'alice@ops.example';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paperclip-operator-retry-'));
    const pack = parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as {
      statuses: Record<string, string>;
      actions: Record<string, { settlingStatuses?: string[] }>;
    };
    pack.statuses['处理中'] = 'PENDING';
    delete pack.actions['mark_processed']!.settlingStatuses;
    writeFileSync(join(dir, 'pack.yaml'), stringify(pack));
    const config = parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as {
      vendor: Record<string, unknown>;
      write_policy: Record<string, unknown>;
    };
    config.vendor['site_pack'] = join(dir, 'pack.yaml');
    config.write_policy['readback_deadline_ms'] = SETTLE_WINDOW_MS;
    writeFileSync(join(dir, 'paperclip.yaml'), stringify(config));
    h = await startHarness({ configPath: join(dir, 'paperclip.yaml') });
  });
  after(async () => {
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const marksOf = async (billNo: string) => (await h.control.journal()).filter((e) => e.billNo === billNo && e.action === 'mark');
  const cli = async (argv: string[]) => {
    const lines: string[] = [];
    const io: Io = { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) };
    const code = await executeTakeover(h.paperclip.services, parseTakeoverArgs(argv), io);
    return { code, out: lines.join('\n') };
  };
  const retry = (key: string, note: string) => cli(['resolve', key, '--as', 'retry', '--note', note, '--operator', operator]);

  test('a takeover item of a sealed batch, resolved by a retry: audit verify is clean; tampering with the same item is still named', async () => {
    await h.control.reset({ seed: 7, tenants: [{ id: 'acme', pending: 1, overcharge: 0, processed: 0 }] });
    const batch = { tenant: 'acme', taskId: 'T-sealed-takeover' };
    const billNo = 'ACME-202611-0001';
    await h.control.setFaults([{ kind: 'half_success', bill: billNo, times: 1 }]);
    const run = await h.paperclip.runBatch(batch);
    assert.equal(run.status, 'SUCCEEDED', run.error);
    const [claim] = await h.paperclip.services.claims.byTask(batch.taskId);
    assert.equal(claim?.status, 'TAKEOVER');
    assert.ok(await h.paperclip.services.evidence.get(batchKey(batch, 'seal.json')), 'the batch is sealed with the item in takeover');
    assert.deepEqual((await verifyBatch(h.paperclip.services, batch)).findings, []);

    const resolved = await retry(claim.key, 'the vendor still shows 待处理; retrying');
    assert.match(resolved.out, /retry .*: done/);
    assert.equal((await h.paperclip.services.claims.get(claim.key))?.status, 'DONE');
    assert.equal((await marksOf(billNo)).length, 1, 'one mutation at the vendor: the first click was a false success');
    const chain = await h.paperclip.services.audit.events(`batch:acme:${batch.taskId}`);
    assert.deepEqual(
      chain.map((e) => e.type),
      ['sealed', 'item_sealed'],
      'the late close added the item to the seal',
    );
    const clean = await verifyBatch(h.paperclip.services, batch);
    assert.deepEqual(clean.findings, [], 'a close after a takeover is the documented extension of the sealed entry');

    // Tampering with the same item is still found: its record replaced, and an event of its resolution edited.
    const s = h.paperclip.services;
    const record = evidenceKey({ ...batch, key: claim.key }, 'record.json');
    await s.evidence.put(record, JSON.stringify({ outcome: 'done', note: 'rewritten' }), 'application/json');
    const events = await s.audit.events(claim.key);
    const resolution = events.find((e) => e.type === 'takeover_resolved')!;
    await s.clients.db.send(
      new UpdateCommand({
        TableName: s.table('audit'),
        Key: { chain: claim.key, seq: resolution.seq },
        UpdateExpression: 'SET actor = :a',
        ExpressionAttributeValues: { ':a': 'someone-else@ops.example' },
      }),
    );
    const tampered = await verifyBatch(s, batch);
    assert.ok(
      tampered.findings.some((f) => f.kind === 'altered' && f.object === record),
      `the replaced record is named: ${JSON.stringify(tampered.findings)}`,
    );
    assert.ok(
      tampered.findings.some((f) => f.kind === 'altered' && f.chain === claim.key && f.seq === resolution.seq),
      `the edited resolution is named: ${JSON.stringify(tampered.findings)}`,
    );
    assert.ok(!tampered.findings.some((f) => /sealed status/.test(f.detail)), 'the late close itself is not a finding');
  });
});
