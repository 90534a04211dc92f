import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parse, stringify } from 'yaml';
import { batchKey, evidenceKey } from '../../src/app/ports/evidence.js';
import { verifyBatch } from '../../src/evidence/verify.js';
import { executeTakeover, parseTakeoverArgs, type Io } from '../../src/cli/takeover.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { SessionLostError } from '../../src/domain/errors.js';
import { handler as readback } from '../../lambdas/readback.js';

/**
 * An operator's retry of a takeover item, on a vendor that applies a change
 * slowly and shows the old state until it has (no interim status): real
 * Chromium against the simulator, the real workflow on the embedded stack.
 * The simulator's interim 处理中 is read as the old state (待处理) by this
 * test's copy of the pack, as such a vendor would show it.
 */
const SETTLE_WINDOW_MS = 20_000;

describe('operator retry', () => {
  let h: Harness;
  let dir: string;
  const operator = 'alice@ops.example';
  /** Readbacks of these keys lose their session before reading, this many more times: the item goes to takeover after its click. */
  const lostReadbacks = new Map<string, number>();
  async function readbackOrLost(event: unknown): Promise<unknown> {
    const { key } = (event as { item: { key: string } }).item;
    const left = lostReadbacks.get(key) ?? 0;
    if (left > 0) {
      lostReadbacks.set(key, left - 1);
      throw new SessionLostError('the readback session was signed out (test)');
    }
    return readback(event);
  }

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
    h = await startHarness({ configPath: join(dir, 'paperclip.yaml'), handlerOverrides: { readback: readbackOrLost } });
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

  const task = (taskId: string, billNo: string) => ({ taskId, tenant: 'acme', billNo, action: 'mark_processed' });
  const afterResolution = async (key: string) => {
    const events = await h.paperclip.services.audit.events(key);
    return events.slice(events.findIndex((e) => e.type === 'takeover_resolved') + 1);
  };

  test('a first write on a slow vendor: readback waits the settle window for the target state, then completes (one click)', async () => {
    await h.control.reset({ seed: 8, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const billNo = 'ACME-202611-0001';
    // The vendor applies the click 14 s later and shows 待处理 until then (the after picture waits 5 s of it).
    await h.control.setFaults([{ kind: 'async_delay_ms', bill: billNo, ms: 14_000 }]);
    const result = await h.runTask(task('T-slow-first', billNo));
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.equal((await marksOf(billNo)).length, 1);
    const key = idempotencyKey(task('T-slow-first', billNo));
    const readbacks = (await h.paperclip.services.audit.events(key)).filter((e) => e.type === 'readback');
    assert.equal(readbacks.length, 1);
    assert.equal(readbacks[0]!.data['verdict'], 'confirmed');
    const seen = readbacks[0]!.data['seen'] as string[];
    assert.ok(
      seen.filter((s) => s === 'PENDING').length >= 2,
      `the old state was seen, and waited out: ${JSON.stringify(readbacks[0]!.data)}`,
    );
  });

  test('an operator retry while the vendor still applies the first click: reads back, waits, confirms; never clicks again', async () => {
    await h.control.reset({ seed: 9, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const billNo = 'ACME-202611-0002';
    const t = task('T-slow-retry', billNo);
    const key = idempotencyKey(t);
    await h.control.setFaults([{ kind: 'async_delay_ms', bill: billNo, ms: 16_000 }]);
    lostReadbacks.set(key, 1);
    const first = await h.runTask(t);
    assert.equal(first.output['outcome'], 'takeover', JSON.stringify(first.output));
    assert.equal((await marksOf(billNo)).length, 1, 'the click landed; the vendor applies it later');

    // The operator retries at once, while the vendor still shows 待处理.
    const resolved = await retry(key, 'readback lost its session; retrying');
    const trail = JSON.stringify((await afterResolution(key)).map((e) => [e.at, e.type, e.data['seen'] ?? e.data['why'] ?? '']));
    assert.equal(resolved.code, 0, `${resolved.out}\n${trail}`);
    assert.match(resolved.out, /retry .*: done/, trail);
    assert.equal((await marksOf(billNo)).length, 1, 'exactly one write in the vendor journal');
    const after = await afterResolution(key);
    const types = after.map((e) => e.type);
    assert.ok(
      !types.some((t) => ['write_started', 'write_step', 'write_failed'].includes(t)),
      `the retry never entered the write: ${types}`,
    );
    const readbacks = after.filter((e) => e.type === 'readback');
    assert.deepEqual(
      readbacks.map((e) => e.data['verdict']),
      ['confirmed'],
      'one readback, which waited for the landed write instead of calling the old state settled',
    );
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'DONE');
  });

  test('a retry that ends in takeover again exits 1 and reopens the item as the next round', async () => {
    await h.control.reset({ seed: 10, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
    const billNo = 'ACME-202611-0003';
    const t = task('T-retry-again', billNo);
    const key = idempotencyKey(t);
    lostReadbacks.set(key, 2);
    const first = await h.runTask(t);
    assert.equal(first.output['outcome'], 'takeover', JSON.stringify(first.output));
    const resolved = await retry(key, 'readback lost its session; retrying');
    assert.match(resolved.out, /retry .*: takeover/);
    assert.equal(resolved.code, 1, resolved.out);
    const entry = await h.paperclip.services.takeovers.get(key);
    assert.equal(entry?.status, 'OPEN');
    assert.equal(entry?.round, 2);
    assert.equal((await marksOf(billNo)).length, 1, 'the retry clicked nothing');
  });
});
