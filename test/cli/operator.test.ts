import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KEY_PATTERN } from '../../src/domain/task.js';
import { openDataSource } from '../../src/cli/data-source.js';
import { configForFolder, DataFolderError } from '../../src/cli/data-folder.js';
import { evidenceObjects, jsonLines, lastJson, paperclip, runWithJsonLines, useSimulatorForCli } from './helpers.js';

/** A stack trace line, which an expected condition must never print. */
const STACK_LINE = /\n {4}at /;

/**
 * The operator's commands on a data folder with no other process running: `run --json-lines`, `items`, a
 * re-run of the same task, `compensate` and `audit verify`, each a `npx paperclip` child process as an operator
 * runs it. One simulator and one data folder for the whole file: acme has 3 pending mismatches.
 */
describe('operator commands on a data folder', () => {
  const cli = useSimulatorForCli({
    controlToken: 'cli-operator-test',
    asyncDelayMs: 100,
    tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }],
  });
  const task = 'T-cli-operator';
  const batchFile = () => evidenceObjects(cli.dataDir).get(`paperclip-evidence/evidence/acme/${task}/batch.json`)!;
  let keys: string[] = [];
  let firstSummary = '';

  test('run --json-lines: one line per item as it settles, each with its key and evidence page; the summary line last', async () => {
    const { items, summary } = await runWithJsonLines(cli, 'acme', task);
    assert.deepEqual({ task: summary['task'], done: summary['done'] }, { task, done: 3 });
    assert.deepEqual(items.map((l) => `${l['item']} ${l['action']} ${l['outcome']}`).sort(), [
      'ACME-202611-0001 mark_processed done',
      'ACME-202611-0002 mark_processed done',
      'ACME-202611-0003 mark_processed done',
    ]);
    for (const l of items) {
      assert.match(String(l['key']), KEY_PATTERN);
      assert.equal(l['evidence'], `s3://paperclip-evidence/evidence/acme/${task}/${String(l['key'])}/index.html`);
    }
    keys = items.map((l) => String(l['key'])).sort();
    firstSummary = readFileSync(batchFile(), 'utf8');
  });

  test('items: the batch with its keys, as a table and as JSON; an unknown task is refused in one line naming the tasks there', async () => {
    const table = await paperclip(['items', '--task', task, '--data-dir', cli.dataDir]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^KEY +BILL +ACTION +OUTCOME +EVIDENCE$/m);
    for (const key of keys)
      assert.match(
        table.stdout,
        new RegExp(`^${key} +ACME-202611-000\\d +mark_processed +done +evidence/acme/${task}/${key}/index\\.html$`, 'm'),
      );
    assert.match(table.stdout, /3 item\(s\): done 3/);
    const json = await paperclip(['items', '--task', task, '--data-dir', cli.dataDir, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const rows = jsonLines(json.stdout);
    assert.deepEqual(rows.map((r) => r['key']).sort(), keys);
    assert.ok(rows.every((r) => r['outcome'] === 'done' && r['tenant'] === 'acme'));

    const unknown = await paperclip(['items', '--task', 'T-nothing-here', '--data-dir', cli.dataDir]);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, new RegExp(`^paperclip items: no item of task T-nothing-here in .*; its tasks: acme/${task}\\n$`));
    assert.doesNotMatch(unknown.stderr, STACK_LINE);
  });

  test('a re-run of the task: the first summary and batch page stay, every item is reported already_done, bar and summary agree', async () => {
    const page = evidenceObjects(cli.dataDir).get(`paperclip-evidence/evidence/acme/${task}/index.html`)!;
    const firstPage = readFileSync(page, 'utf8');
    const journal = (await cli.control.journal()).length;
    const { run, items, summary } = await runWithJsonLines(cli, 'acme', task);
    assert.deepEqual(
      {
        done: summary['done'],
        skipped: summary['skipped'],
        settled_earlier: summary['settled_earlier'],
        already_done: summary['already_done'],
      },
      { done: 3, skipped: 0, settled_earlier: 3, already_done: 3 },
    );
    assert.deepEqual(
      items.map((l) => `${String(l['key'])} ${String(l['outcome'])}`).sort(),
      keys.map((k) => `${k} already_done`),
    );
    assert.match(run.stderr, /3\/3 items \(done 3\)/, 'the bar counts what the summary counts');
    assert.doesNotMatch(run.stderr, /\d+\/0 items/);
    assert.equal((await cli.control.journal()).length, journal, 'nothing written twice');
    assert.equal(readFileSync(batchFile(), 'utf8'), firstSummary, "the first run's batch.json is kept");
    assert.equal(readFileSync(page, 'utf8'), firstPage, "the first run's batch page is kept");
    const rerunFiles = [...evidenceObjects(cli.dataDir).keys()].filter((k) => k.includes(`/${task}/batch.rerun-`));
    assert.equal(rerunFiles.length, 1, "the re-run's summary is stored beside the first");
    const rerun = JSON.parse(readFileSync(evidenceObjects(cli.dataDir).get(rerunFiles[0]!)!, 'utf8')) as {
      already: unknown;
      items: number;
    };
    assert.deepEqual({ items: rerun.items, already: rerun.already }, { items: 3, already: { done: 3 } });
  });

  test('compensate <key> from the folder alone undoes the write (journal), items then shows it compensated; unknown keys refused without a stack', async () => {
    const key = keys[0]!;
    const before = (await cli.control.journal()).length;
    const unknown = await paperclip(['compensate', `k-acme_${'0'.repeat(32)}`, '--reason', 'no such write', '--data-dir', cli.dataDir]);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.doesNotMatch(unknown.stderr, STACK_LINE);
    const undone = await paperclip(['compensate', key, '--reason', 'marked by mistake', '--data-dir', cli.dataDir]);
    assert.equal(undone.code, 0, undone.stderr);
    assert.equal(lastJson(undone.stdout)['rolledBack'], true, undone.stdout);
    const journal = (await cli.control.journal()).slice(before);
    assert.deepEqual(
      journal.map((e) => e.action),
      ['unmark'],
      'the inverse ran once',
    );
    const items = await paperclip(['items', '--task', task, '--data-dir', cli.dataDir, '--json']);
    const row = jsonLines(items.stdout).find((r) => r['key'] === key);
    assert.equal(row?.['outcome'], 'compensated');
  });

  test('audit verify without flags checks every chain, also one no batch leads to', async () => {
    const stray = `k-acme_${'f'.repeat(32)}`;
    const source = await openDataSource({ dataDir: cli.dataDir });
    try {
      await source.services.audit.append(stray, { type: 'stage_already_done', actor: 'svc-recon-acme', data: { stage: 'save' } });
    } finally {
      await source.close();
    }
    const verify = await paperclip(['audit', 'verify', '--data-dir', cli.dataDir, '--json']);
    assert.equal(verify.code, 0, verify.stderr);
    const result = JSON.parse(verify.stdout) as { notes: string[]; findings: unknown[] };
    assert.deepEqual(result.findings, []);
    assert.ok(
      result.notes.some((n) => n.startsWith(`chain ${stray} belongs to no batch or seal`)),
      result.notes.join('\n'),
    );
  });

  test('a folder whose recorded config is gone: refused naming the prefix and bucket, never read with the sample', () => {
    const folder = join(cli.dir, 'moved');
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'folder.json'),
      JSON.stringify({ configPath: join(cli.dir, 'deleted.yaml'), prefix: 'elsewhere', bucket: 'elsewhere-evidence' }),
    );
    assert.throws(
      () => configForFolder(folder, undefined),
      (error: unknown) =>
        error instanceof DataFolderError &&
        /which is gone; pass --config with a config naming prefix "elsewhere" and evidence bucket "elsewhere-evidence"/.test(error.message),
    );
  });

  test('no data folder: every operator command refuses in one line (exit 2), no stack trace', async () => {
    const missing = join(cli.dir, 'no-such-folder');
    for (const args of [
      ['items', '--task', task, '--data-dir', missing],
      ['audit', 'verify', '--data-dir', missing],
    ]) {
      const run = await paperclip(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /there is no data folder at .*no-such-folder/);
      assert.doesNotMatch(run.stderr, STACK_LINE);
    }
  });
});
