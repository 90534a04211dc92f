import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { idempotencyKey } from '../../src/domain/task.js';
import { routeTask } from '../../src/domain/routing.js';
import { writeIdentity } from '../../src/domain/claim.js';
import { takeover } from '../../src/app/guarded-write/takeover.js';
import { handler as readback } from '../../lambdas/readback.js';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { ValidationError } from '../../src/config/errors.js';
import { TakeoverRefusedError } from '../../src/app/takeover/resolve.js';
import { executeTakeover, parseTakeoverArgs, runTakeover, type Io } from '../../src/cli/takeover.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The human takeover queue end to end: real Chromium against the simulator,
 * the real workflow on the embedded stack. What the vendor did comes from the
 * simulator's journal; what Paperclip concluded from the claim, the queue
 * entry and the audit chain.
 */
/** The task whose claim another runner takes over between its readback and Complete (see readbackThenTakenOver). */
const FENCED_AT_CLOSE = 'T-fenced-at-close';

describe('human takeover queue', () => {
  let h: Harness;
  let configDir: string;
  const operator = 'alice@ops.example';
  const otherRunner = 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:other-runner';

  /** The real readback; for FENCED_AT_CLOSE's task another runner then takes the claim over, before Complete runs. */
  async function readbackThenTakenOver(event: unknown): Promise<unknown> {
    const outcome = await readback(event);
    const item = (event as { item: { taskId: string; key: string } }).item;
    if (item.taskId === FENCED_AT_CLOSE) {
      // The other runner is not this readback: it acts with its own credentials (here the operator's), not the readback role.
      await h.paperclip.iam.asOperator(async () => {
        const claim = await h.paperclip.services.claims.get(item.key);
        await h.paperclip.services.claims.takeOver(claim!, otherRunner, new Date(Date.now() + 300_000).toISOString());
      });
    }
    return outcome;
  }

  before(async () => {
    // A short readback deadline, so a slow vendor settle outlives the first readback in seconds, not minutes.
    configDir = mkdtempSync(join(tmpdir(), 'paperclip-takeover-config-'));
    const config = parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as { write_policy: Record<string, unknown> };
    config.write_policy['readback_deadline_ms'] = 4000;
    writeFileSync(join(configDir, 'paperclip.yaml'), stringify(config));
    h = await startHarness({ configPath: join(configDir, 'paperclip.yaml'), handlerOverrides: { readback: readbackThenTakenOver } });
    await h.control.reset({
      seed: 21,
      tenants: [
        { id: 'acme', pending: 6, overcharge: 0, processed: 0 },
        { id: 'globex', pending: 1, overcharge: 0, processed: 0 },
      ],
    });
  });
  after(async () => {
    await h?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  const task = (n: number) => ({ taskId: 'T-takeover', tenant: 'acme', billNo: `ACME-202611-000${n}`, action: 'mark_processed' });
  const keyOf = (n: number) => idempotencyKey(task(n));
  const marksOf = async (n: number) => (await h.control.journal()).filter((e) => e.billNo === task(n).billNo && e.action === 'mark');
  const auditOf = (key: string) => h.paperclip.services.audit.events(key);
  const capture = (): Io & { lines: string[] } => {
    const lines: string[] = [];
    return { lines, out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) };
  };
  const cli = async (argv: string[]) => {
    const io = capture();
    const code = await executeTakeover(h.paperclip.services, parseTakeoverArgs(argv), io);
    return { code, out: io.lines.join('\n') };
  };
  const resolveArgs = (key: string, as: string, note = 'checked the vendor back office') => [
    'resolve',
    key,
    '--as',
    as,
    '--note',
    note,
    '--operator',
    operator,
  ];

  test('a false success lands in the queue with its reason, evidence and an operator mail; retry goes through the guarded path, one mutation', async () => {
    const key = keyOf(1);
    await h.control.setFaults([{ kind: 'half_success', bill: task(1).billNo, times: 1 }]);
    const result = await h.runTask(task(1));
    assert.equal(result.output['outcome'], 'takeover');

    const entry = await h.paperclip.services.takeovers.get(key);
    assert.ok(entry, 'the item is in the queue');
    assert.equal(entry.status, 'OPEN');
    assert.equal(entry.billNo, task(1).billNo);
    assert.equal(entry.identity, 'svc-recon-acme');
    assert.match(entry.reason, /false success/);
    assert.equal(entry.stage, 'readback');
    assert.equal(entry.tier, 'browser');
    // readback.png: a readback that is not confirmed pictures the page it read (a person will look into it).
    for (const name of ['before.png', 'after.png', 'trace.zip', 'readback.png', 'record.json']) {
      assert.ok(
        entry.evidence.some((k) => k.endsWith(`/${key}/${name}`)),
        `evidence links include ${name}`,
      );
    }
    const mails = (await h.paperclip.stack.fetchEmails()).filter(
      (m) => m.subject.includes(task(1).billNo) && m.subject.includes('Takeover'),
    );
    assert.equal(mails.length, 1, 'one operator mail');
    assert.deepEqual(mails[0]!.destination.to, ['ops-oncall@ops.example']);
    assert.match(mails[0]!.body.text ?? '', new RegExp(`s3://paperclip-evidence/evidence/acme/T-takeover/${key}/after.png`));
    assert.match(mails[0]!.body.text ?? '', new RegExp(`paperclip takeover resolve ${key}`));
    assert.deepEqual(entry.notified, ['ops-oncall@ops.example']);

    const listed = await cli(['list']);
    assert.match(listed.out, new RegExp(`${key}\\s+OPEN`));

    const resolved = await cli(resolveArgs(key, 'retry', 'vendor still shows 待处理 after the toast; retrying'));
    assert.equal(resolved.code, 0);
    assert.match(resolved.out, /retry .*: done/);
    assert.equal((await marksOf(1)).length, 1, 'exactly one vendor mutation for the bill');
    const claim = await h.paperclip.services.claims.get(key);
    assert.equal(claim?.status, 'DONE');
    const after = await h.paperclip.services.takeovers.get(key);
    assert.equal(after?.status, 'RESOLVED');
    assert.equal(after?.resolution?.as, 'retry');
    assert.equal(after?.resolution?.operator, operator);
    assert.equal(after?.resolution?.retryOutcome, 'done');

    const events = await auditOf(key);
    const types = events.map((e) => e.type);
    const resolvedAt = types.indexOf('takeover_resolved');
    assert.ok(resolvedAt > 0, 'the resolution is in the audit trail');
    assert.equal(events[resolvedAt]!.actor, operator, 'by the operator');
    const readbackAt = types.indexOf('readback', resolvedAt);
    const clickAt = types.indexOf('write_started', resolvedAt);
    assert.ok(readbackAt > resolvedAt && clickAt > readbackAt, 'the retry read back before it clicked');
    assert.equal(types.filter((t) => t === 'write_started').length, 2, 'one click per run: the lying one and the retry');
    assert.ok(types.includes('completed'));
  });

  test('retry of a write that landed after the readback gave up: confirmed by readback, never clicked again', async () => {
    const key = keyOf(2);
    await h.control.setFaults([{ kind: 'async_delay_ms', bill: task(2).billNo, ms: 20_000 }]);
    const result = await h.runTask(task(2));
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(String(result.output['reason']), /inconclusive/);
    assert.equal((await marksOf(2)).length, 1, 'the write landed');
    // The operator looks later, once the vendor has settled.
    for (let i = 0; i < 200; i++) {
      const bill = (await h.control.state()).bills.find((b) => b.billNo === task(2).billNo);
      if (bill?.status === 'PROCESSED') break;
      await sleep(250);
    }
    const resolved = await cli(resolveArgs(key, 'retry', 'the list shows 已处理 now; confirm it'));
    assert.match(resolved.out, /retry .*: done/);
    assert.equal((await marksOf(2)).length, 1, 'still exactly one mutation');
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'DONE');
    const types = (await auditOf(key)).map((e) => e.type);
    assert.equal(types.filter((t) => t === 'write_started').length, 1, 'the retry did not click');
  });

  test("a run that lost the claim hands nothing over: the other run's claim, the queue and the vendor stay as they are", async () => {
    // However a run that lost the claim comes to Takeover, it holds nothing to hand over.
    const s = h.paperclip.services;
    const item = { ...routeTask(task(6), s.config, s.pack), key: keyOf(6) };
    const now = new Date().toISOString();
    const other = 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:other-run';
    const leaseUntil = new Date(Date.now() + 300_000).toISOString();
    assert.ok(
      await s.claims.tryCreate({
        ...writeIdentity(item),
        owner: other,
        status: 'CLAIMED',
        version: 1,
        leaseUntil,
        attempts: 1,
        createdAt: now,
        updatedAt: now,
      }),
    );
    const journalBefore = (await h.control.journal()).length;
    const outcome = await takeover(s, {
      state: {
        item,
        claim: { decision: 'skip', reason: 'in progress elsewhere', status: 'CLAIMED' },
        snapshot: null,
        approval: null,
        write: null,
        writeError: null,
        readback: null,
        takeoverReason: { Error: 'Lambda.Unknown', Cause: 'the snapshot function could not start' },
        compensation: null,
      },
      executionArn: 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:lost-run',
    });
    assert.equal(outcome.outcome, 'skipped');
    const claim = await s.claims.get(item.key);
    assert.equal(claim?.status, 'CLAIMED');
    assert.equal(claim?.owner, other);
    assert.equal(await s.takeovers.get(item.key), undefined, 'nothing queued');
    assert.equal((await auditOf(item.key)).at(-1)?.type, 'takeover_not_taken');
    assert.equal((await h.control.journal()).length, journalBefore);
  });

  test("a run whose claim is taken over between its readback and Complete ends skipped and closes nothing of the new holder's", async () => {
    // Run A wrote and read back; meanwhile its lease ran out and another runner took the claim over to read back itself.
    const s = h.paperclip.services;
    const globexBill = (await h.control.state()).bills.find((b) => b.tenant === 'globex' && b.status === 'PENDING')!.billNo;
    const fenced = { taskId: FENCED_AT_CLOSE, tenant: 'globex', billNo: globexBill, action: 'mark_processed' };
    const key = idempotencyKey(fenced);
    const run = await h.runTask(fenced);
    assert.equal(run.status, 'SUCCEEDED', 'a fenced close is an outcome, not a failed execution');
    assert.equal(run.output['outcome'], 'skipped', JSON.stringify(run.output));
    assert.match(String(run.output['reason']), /claim moved to another runner/);
    const claim = await s.claims.get(key);
    assert.deepEqual([claim?.status, claim?.owner, claim?.version], ['WRITING', otherRunner, 2], 'the new holder still decides the item');
    assert.equal(await s.evidence.exists(evidenceKey({ tenant: 'globex', taskId: FENCED_AT_CLOSE, key }, 'record.json')), false);
    assert.ok(!(await auditOf(key)).some((e) => e.type === 'completed'), 'no completion in the trail');
    assert.equal((await h.control.journal()).filter((e) => e.billNo === globexBill && e.action === 'mark').length, 1);
  });

  describe('done, abandon and bad input', () => {
    before(async () => {
      await h.control.setFaults([3, 4, 5].map((n) => ({ kind: 'half_success' as const, bill: task(n).billNo })));
      const outcomes = await Promise.all([3, 4, 5].map((n) => h.runTask(task(n))));
      assert.deepEqual(
        outcomes.map((o) => o.output['outcome']),
        ['takeover', 'takeover', 'takeover'],
      );
    });

    test('--as done: the operator did it by hand; claim DONE (done_by_operator), queue resolved, audit by the operator', async () => {
      const key = keyOf(3);
      const journalBefore = (await h.control.journal()).length;
      const { code, out } = await cli(resolveArgs(key, 'done', 'marked 已处理 by hand in the back office'));
      assert.equal(code, 0);
      assert.match(out, /resolved .* as done .*: claim DONE/);
      const claim = await h.paperclip.services.claims.get(key);
      assert.equal(claim?.status, 'DONE');
      assert.equal(claim?.outcome, 'done_by_operator');
      const entry = await h.paperclip.services.takeovers.get(key);
      assert.equal(entry?.status, 'RESOLVED');
      assert.equal(entry?.resolution?.as, 'done');
      assert.equal(entry?.resolution?.note, 'marked 已处理 by hand in the back office');
      const last = (await auditOf(key)).at(-1)!;
      assert.equal(last.type, 'takeover_resolved');
      assert.equal(last.actor, operator);
      assert.equal(last.data['as'], 'done');
      assert.equal((await h.control.journal()).length, journalBefore, 'the machine touched nothing');
    });

    test('--as abandon: claim FAILED, queue resolved, audit by the operator, nothing written', async () => {
      const key = keyOf(4);
      const journalBefore = (await h.control.journal()).length;
      const { code } = await cli(resolveArgs(key, 'abandon', 'duplicate discrepancy; the vendor will close it'));
      assert.equal(code, 0);
      const claim = await h.paperclip.services.claims.get(key);
      assert.equal(claim?.status, 'FAILED');
      assert.equal(claim?.outcome, 'abandoned_by_operator');
      assert.equal((await h.paperclip.services.takeovers.get(key))?.resolution?.as, 'abandon');
      const last = (await auditOf(key)).at(-1)!;
      assert.equal(last.type, 'takeover_resolved');
      assert.equal(last.actor, operator);
      assert.equal((await h.control.journal()).length, journalBefore);
    });

    test('bad input gets a clear error and changes nothing', async () => {
      const key = keyOf(5);
      const s = h.paperclip.services;
      const snapshot = async () => ({
        entry: await s.takeovers.get(key),
        claim: await s.claims.get(key),
        audit: (await s.audit.events(key)).length,
        journal: (await h.control.journal()).length,
        resolved: (await s.takeovers.list('RESOLVED')).length,
      });
      const before = await snapshot();

      const parseErrors: Array<[string[], RegExp]> = [
        [['resolve', key, '--as', 'redo', '--note', 'x', '--operator', operator], /--as: --as must be one of done, retry, abandon/],
        [['resolve', key, '--as', 'done', '--operator', operator], /--note: --note is required/],
        [['resolve', key, '--as', 'done', '--note', '   ', '--operator', operator], /--note must not be blank/],
        [
          ['resolve', key, '--as', 'done', '--note', '\u200b\u0301', '--operator', operator],
          /--note must not be blank: it needs at least one visible/,
        ],
        [['resolve', key, '--as', 'done', '--note', 'x', '--operator', 'alice'], /--operator must be your email address/],
        [
          ['resolve', 'ACME-202611-0005', '--as', 'done', '--note', 'x', '--operator', operator],
          /is not a key; keys look like k-<tenant>_ and 32 hex digits/,
        ],
        [['resolve', '--as', 'done', '--note', 'x', '--operator', operator], /expected <key>, got none/],
        [['resolve', key, '--as', 'done', '--note', 'x', '--operator', operator, '--force'], /unknown flag --force/],
        [['list', '--status', 'closed'], /--status must be open, resolved or all/],
        [['list', '--tenant', 'ACME"; drop'], /tenant ids are lower-kebab-case/],
        [['purge'], /unknown subcommand "purge"/],
      ];
      for (const [argv, message] of parseErrors) {
        assert.throws(
          () => parseTakeoverArgs(argv),
          (error: unknown) => error instanceof ValidationError && message.test(error.message),
          argv.join(' '),
        );
      }

      const refusals: Array<[string[], RegExp]> = [
        [resolveArgs(`k-acme_${'0'.repeat(32)}`, 'done'), /no takeover item k-acme_0{32}/],
        [resolveArgs(keyOf(3), 'abandon'), new RegExp(`${keyOf(3)} is already resolved as done by ${operator}`)],
        [['show', `k-acme_${'f'.repeat(32)}`], /no takeover item/],
      ];
      for (const [argv, message] of refusals) {
        await assert.rejects(
          cli(argv),
          (error: unknown) => error instanceof TakeoverRefusedError && message.test(error.message),
          argv.join(' '),
        );
      }
      assert.deepEqual(await snapshot(), before, 'queue, claim, audit and vendor unchanged');
      assert.equal(before.entry?.status, 'OPEN');
    });

    test('list and show: open items by default, --status all, --tenant, evidence links and the audit trail', async () => {
      const open = await cli(['list']);
      assert.match(open.out, new RegExp(keyOf(5)));
      assert.doesNotMatch(open.out, new RegExp(keyOf(3)));
      const all = await cli(['list', '--status', 'all', '--json']);
      const keys = all.out.split('\n').map((l) => (JSON.parse(l) as { key: string }).key);
      assert.deepEqual(new Set(keys), new Set([1, 2, 3, 4, 5].map(keyOf)));
      assert.match((await cli(['list', '--tenant', 'globex'])).out, /no open takeover items for globex/);
      const show = await cli(['show', keyOf(5)]);
      assert.match(show.out, /status {5}OPEN \(round 1/);
      assert.match(show.out, new RegExp(`s3://paperclip-evidence/evidence/acme/T-takeover/${keyOf(5)}/after.png`));
      assert.match(show.out, /takeover +svc-recon-acme/);
    });

    test('paperclip takeover on the data folder when no stack runs: starts its own, resolves; bad input exits 2 before opening anything', async () => {
      await h.paperclip.stop();
      const bad = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/cli/main.ts',
          'takeover',
          'resolve',
          keyOf(5),
          '--as',
          'maybe',
          '--note',
          'x',
          '--operator',
          operator,
          '--data-dir',
          h.dataDir,
        ],
        { encoding: 'utf8', env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }, timeout: 120_000 },
      );
      assert.equal(bad.status, 2, bad.stderr);
      assert.match(bad.stderr, /--as must be one of done, retry, abandon/);

      const lines: string[] = [];
      const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
      const common = ['--data-dir', h.dataDir, '--config', join(configDir, 'paperclip.yaml')];
      assert.equal(await runTakeover([...resolveArgs(keyOf(5), 'abandon', 'closed by the vendor'), ...common], io), 0, lines.join('\n'));
      assert.ok(
        lines.some((l) => /resolved .* as abandon/.test(l)),
        lines.join('\n'),
      );
      lines.length = 0;
      assert.equal(await runTakeover(['list', '--status', 'resolved', '--json', ...common], io), 0);
      const entries = lines
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { key: string; resolution: { as: string; operator: string } });
      assert.equal(entries.find((e) => e.key === keyOf(5))?.resolution.as, 'abandon');
      assert.equal(entries.find((e) => e.key === keyOf(5))?.resolution.operator, operator);
    });
  });
});
