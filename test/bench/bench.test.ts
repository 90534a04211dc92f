import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { parseBenchArgs } from '../../bench/args.js';
import { BenchReportSchema } from '../../bench/report-schema.js';
import { fillTemplate, renderMarkdown } from '../../bench/report-markdown.js';
import { runBenchmark } from '../../bench/run-bench.js';

/**
 * The benchmark end to end at its smallest: 3 bills, concurrency 1, one
 * repeat, the write traced. Outcomes only — the report is complete, both paths
 * mutated each bill exactly once, a lost claim touched no browser — never timings.
 */

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

after(closeSharedBrowser);

test('a small benchmark run reports every field and one vendor mutation per item for raw and guarded', async () => {
  const report = await runBenchmark({
    items: 3,
    concurrency: [1],
    repeat: 1,
    tracing: 'on',
    settleMs: 0,
    summarizeItems: 20,
    command: 'test',
    quick: true,
  });
  const parsed = BenchReportSchema.safeParse(report);
  assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 5)));

  for (const path of ['raw', 'raw-evidence', 'guarded'] as const) {
    const runs = report.runs.filter((r) => r.path === path);
    assert.equal(runs.length, 1, `one ${path} run`);
    const run = runs[0]!;
    assert.equal(run.items, 3, `${path}: three items`);
    assert.equal(run.journal.mutations, 3, `${path}: three vendor mutations in the journal`);
    assert.equal(run.journal.distinctBills, 3, `${path}: one per bill`);
    assert.ok(run.journal.exactlyOnePerItem, `${path}: exactly one mutation per item`);
    assert.deepEqual(run.outcomes, { done: 3 }, `${path}: every item done`);
    // Sampled by a separate process reading /proc: the browser tree was seen and its CPU counted.
    assert.ok(run.peakBrowser.processes > 0 && run.peakBrowser.samples >= 2, `${path}: the sampler saw the Chromium tree`);
    assert.ok(run.cpu.chromiumMs > 0 && run.cpu.nodeMs > 0, `${path}: CPU of Chromium and of this process attributed to the run`);
    if (path === 'guarded') {
      // DynamoDB, S3 and SES ran in a forked process: their CPU is recorded apart from this process's.
      assert.ok((run.cpu.emulatorsMs ?? 0) > 0, `guarded: the forked emulators' CPU is recorded (got ${run.cpu.emulatorsMs})`);
    } else {
      assert.equal(run.cpu.emulatorsMs, undefined, `${path}: the scripts use no AWS emulator`);
    }
  }

  const lost = report.claimConflict.lostClaimRuns;
  assert.deepEqual(lost.outcomes, { skipped: 3 }, 'a second runner skips every key the first one completed');
  assert.equal(lost.mutations, 0);
  assert.equal(lost.sessionsOpened, 0);
  assert.equal(lost.browserStepsEntered, 0);
  assert.equal(lost.chromiumProcessesPeak, 0, 'no Chromium process ran while the lost claims were decided');
  assert.ok(lost.noBrowserLaunched);

  const work = report.cost.work.on!;
  assert.ok(work.transitionsPerItem >= 5, 'state transitions are counted from the histories');
  assert.ok(work.s3PutsPerItem >= 5, 'evidence objects are counted');
  assert.ok(work.evidenceBytesPerItem > 0);
  assert.ok(Object.keys(work.dynamoWriteUnitsByTable).includes('claims'));
  assert.deepEqual(
    work.functions
      .filter((f) => f.per === 'item')
      .map((f) => f.fn)
      .sort(),
    ['browser-write', 'claim', 'complete', 'readback', 'validate-route'],
    'a browser write without approval gets its pre-state from routing through Claim: no Snapshot invocation',
  );
  assert.ok(report.cost.evidencePerItem['trace.zip'], 'the traced write left a trace per item');
  assert.ok(report.cost.baseline.on!.total > 0 && report.cost.baselineCpu.on!.total > 0);
  assert.equal(report.targets.length, 13);
  const guarded = report.throughput.find((t) => t.path === 'guarded' && t.concurrency === 1)!;
  assert.ok(
    guarded.coresBusy > 0 && guarded.coresBusy <= report.machine.cores + 0.5,
    `cores busy is CPU over wall time (${guarded.coresBusy})`,
  );
  assert.ok(guarded.itemsPerCoreSecond > 0, 'throughput per core-second is items over the run own CPU time');
  // The headline is against V1 as written; the bare-script ratio stays beside it.
  assert.match(report.targets[0]!.target, /V1 as written/);
  assert.match(report.targets[0]!.measured, /bare script without evidence/);
  const headline = report.latency.vsV1.on!;
  assert.ok(headline.median > 0 && headline.p95 > 0 && headline.cpu > 0);
  const split = report.vendorSplit.guarded.on!;
  assert.ok(split.firstItemMs > 0, 'first-item latency reported');
  assert.ok((split.emulatorsCpuMs ?? 0) > 0, "the forked emulators' CPU per item is reported beside Node's");
  const readbackStep = split.steps.find((st) => st.step === 'Readback')!;
  assert.equal(readbackStep.sessionsPerItem, 1, 'every readback takes one session, counted in its own step');
  // Every guarantee leaves its evidence in the run: readback session, pictures, trace, record, seal.
  const guarantee = report.targets.find((t) => t.target.startsWith('every guarantee kept'))!;
  assert.equal(guarantee.met, true, guarantee.measured);

  // Summarize at scale: every settled item summarised and sealed, its CPU measured apart from the emulators.
  assert.equal(report.summarizeScale.summaryItems, 20);
  assert.equal(report.summarizeScale.sealedItems, 20);
  assert.ok(report.summarizeScale.cpuMs > 0 && report.summarizeScale.peakRssMiB > 0);

  const markdown = renderMarkdown(report);
  assert.ok(!markdown.includes('{{'), 'every template placeholder is filled');
  assert.ok(markdown.includes("AWS emulators' CPU per item (not Lambda's)"), "the headline shows the emulators' CPU beside the CPU row");
  for (const heading of [
    '## Headline: the guarded path against V1 as written',
    '## Targets',
    '## Per-item latency at concurrency 1',
    '## Throughput',
    '## Memory',
    '## Claim conflict',
    '## Summarize at batch scale',
    '## AWS cost model',
    '## How to run',
  ]) {
    assert.ok(markdown.includes(heading), `BENCHMARKS.md has ${heading}`);
  }
});

test('the BENCHMARKS.md template refuses a placeholder without a value and a value without a placeholder', () => {
  assert.equal(fillTemplate('a {{x}} b', { x: '1' }), 'a 1 b');
  assert.throws(() => fillTemplate('a {{x}} {{y}}', { x: '1' }), /placeholder \{\{y\}\} has no value/);
  assert.throws(() => fillTemplate('a {{x}}', { x: '1', z: '2' }), /has no placeholder for \{\{z\}\}/);
});

test('bench flags are validated and name the flag', () => {
  assert.deepEqual(
    { ...parseBenchArgs([]) },
    { items: 12, concurrency: [1, 2, 4], repeat: 1, tracing: 'both', out: 'BENCHMARKS.md', 'settle-ms': 0, 'summarize-items': 2000 },
  );
  assert.deepEqual(parseBenchArgs(['--concurrency', '4,1,2,2']).concurrency, [1, 2, 4]);
  assert.throws(() => parseBenchArgs(['--concurrency', '2,4']), /--concurrency: include 1/);
  assert.throws(() => parseBenchArgs(['--concurrency', '1,two']), /--concurrency: give a comma-separated list/);
  assert.throws(() => parseBenchArgs(['--tracing', 'maybe']), /--tracing/);
  assert.throws(() => parseBenchArgs(['--items', '0']), /--items must be 1 to 200/);
  assert.throws(() => parseBenchArgs(['--repeat', 'x']), /--repeat must be a whole number/);
  assert.throws(() => parseBenchArgs(['--verbose']), /unknown flag --verbose/);
});

test('npm run bench -- --help prints the usage and exits 0, running nothing', () => {
  const help = spawnSync(process.execPath, ['--import', 'tsx', 'bench/main.ts', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: npm run bench -- \[--items N\]/);
});
