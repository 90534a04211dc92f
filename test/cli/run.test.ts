import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../src/cli/args.js';
import { runRun } from '../../src/cli/run.js';
import { KEY_PATTERN } from '../../src/domain/task.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { SimulatorControl } from '../../src/simulator/control-client.js';
import { configFor, lastJson, paperclip } from './helpers.js';

/**
 * `paperclip run` against a back office it did not start: the simulator runs
 * here, Paperclip (embedded stack, Chromium) in a child process, as an engineer
 * runs it against a vendor. acme has 2 pending mismatches, 1 overcharge and 1
 * processed bill; the simulator knows no initech, whose login therefore fails.
 */
describe('paperclip run', () => {
  let sim: RunningSimulator;
  let control: SimulatorControl;
  let setup: ReturnType<typeof configFor>;
  const dataDir = () => join(setup.dir, 'data');

  before(async () => {
    sim = await startSimulator({
      controlToken: 'cli-run-test',
      asyncDelayMs: 100,
      tenants: [
        { id: 'acme', pending: 2, overcharge: 1, processed: 1 },
        { id: 'globex', pending: 1, overcharge: 0, processed: 0 },
      ],
    });
    control = new SimulatorControl(sim.url, 'cli-run-test');
    setup = configFor(sim.url);
  });
  after(async () => {
    await sim?.close();
    setup?.remove();
  });

  test('bad flags and a tenant or item the config does not allow: refused naming the flag, nothing started or written', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--tenant', 'acme'], /--config: is required; give --config <file>/],
      [['--config', setup.config, '--tenant', 'acme', '--dry'], /unknown flag --dry; did you mean --keep\?|unknown flag --dry/],
      [
        ['--config', setup.config, '--tenant', 'umbrella'],
        /--tenant: "umbrella" is not a tenant of .*; its tenants: acme, globex, initech/,
      ],
      [['--config', setup.config, '--tenant', 'acme', '--item', 'ACME-202611-0001'], /--action: is required with --item/],
      [
        ['--config', setup.config, '--tenant', 'acme', '--item', 'acme-1', '--action', 'mark_processed'],
        /--item: billNo "acme-1" is not a bill number of vendor-sim/,
      ],
      [
        ['--config', setup.config, '--tenant', 'acme', '--item', 'ACME-202611-0003', '--action', 'refund'],
        /--param: task\.params\.amount: action "refund" needs amount/,
      ],
      [
        ['--config', setup.config, '--tenant', 'acme', '--item', 'ACME-202611-0001', '--action', 'mark_processed', '--param', 'x'],
        /--param: "x" is not name=value/,
      ],
    ];
    // In-process: these are refused before anything starts (main.ts turns the UsageError into exit code 2, see args.test.ts).
    for (const [args, message] of cases) {
      await assert.rejects(
        runRun([...args, '--data-dir', dataDir()]),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        args.join(' '),
      );
    }
    assert.equal(existsSync(dataDir()), false, 'no data folder was created');
    assert.deepEqual(await control.journal(), [], 'the vendor saw no write');
  });

  test('a batch against the running back office: progress on stderr, one summary line, one mutation per pending item, exit 0', async () => {
    const run = await paperclip(['run', '--config', setup.config, '--tenant', 'acme', '--task', 'T-cli-run-acme', '--data-dir', dataDir()]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim().split('\n').length, 1, 'stdout is the summary line alone');
    const summary = lastJson(run.stdout);
    assert.deepEqual(
      {
        task: summary['task'],
        read: summary['read'],
        done: summary['done'],
        awaiting: summary['awaiting_approval'],
        error: summary['error'],
      },
      { task: 'T-cli-run-acme', read: 4, done: 2, awaiting: 1, error: 0 },
    );
    assert.match(run.stderr, new RegExp(`vendor +${sim.url.replace(/[.]/g, '\\.')}`));
    assert.match(run.stderr, /batch succeeded/);
    assert.match(run.stderr, /ACME-202611-0003 → finance\.lead@acme\.example \(open the mail/);
    assert.doesNotMatch(run.stderr, /\/approvals\/|pw-acme-2026/, 'no approval link or vendor password on the terminal');
    const journal = await control.journal();
    assert.deepEqual(journal.map((e) => `${e.billNo} ${e.action}`).sort(), ['ACME-202611-0001 mark', 'ACME-202611-0002 mark']);
  });

  test('--item runs one guarded write and prints its outcome as one JSON line', async () => {
    const before = (await control.journal()).length;
    const run = await paperclip([
      'run',
      '--config',
      setup.config,
      '--tenant',
      'acme',
      '--item',
      'ACME-202611-0004',
      '--action',
      'unmark_processed',
      '--data-dir',
      dataDir(),
    ]);
    assert.equal(run.code, 0, run.stderr);
    const outcome = lastJson(run.stdout);
    assert.equal(outcome['outcome'], 'done');
    assert.equal(outcome['item'], 'ACME-202611-0004');
    assert.equal(outcome['claim'], 'DONE');
    assert.match(String(outcome['key']), KEY_PATTERN);
    const journal = await control.journal();
    assert.equal(journal.length, before + 1);
    assert.equal(journal.at(-1)?.billNo, 'ACME-202611-0004');
  });

  test('a batch whose list cannot be read exits 1 with the error in the summary line', async () => {
    const before = await control.journal();
    const run = await paperclip(['run', '--config', setup.config, '--tenant', 'initech', '--data-dir', dataDir()]);
    assert.equal(run.code, 1, run.stderr);
    const summary = lastJson(run.stdout);
    assert.equal(summary['tenant'], 'initech');
    assert.ok(summary['error'], run.stdout);
    assert.deepEqual(await control.journal(), before);
  });
});
