import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeCost, levers, loadPrices, loadSizing, MB_PER_VCPU, type MeasuredWork, type Scenario } from '../../bench/cost-model.js';
import { sizingOf } from '../../src/contracts/sizing.js';

/** The cost model on fixed inputs: the arithmetic and the direction of each lever, not any measurement. */

const prices = loadPrices();
const sizing = loadSizing('cdk/deploy-config.sample.json');

const work: MeasuredWork = {
  label: 'fixed',
  tracing: 'on',
  itemsPerBatchMeasured: 10,
  transitionsPerItem: 15,
  transitionsPerBatch: 3,
  browserStateTransitionsPerItem: 3,
  functions: [
    { fn: 'claim', browser: false, per: 'item', invocations: 1, meanMs: 100, vendorMs: 0, cpuMs: 20, growsWithBatch: false },
    { fn: 'browser-write', browser: true, per: 'item', invocations: 1, meanMs: 2000, vendorMs: 200, cpuMs: 900, growsWithBatch: false },
    { fn: 'read-list', browser: true, per: 'batch', invocations: 1, meanMs: 3000, vendorMs: 300, cpuMs: 1000, growsWithBatch: false },
  ],
  dynamoWriteUnitsByTable: { claims: 4, audit: 6 },
  dynamoReadUnitsPerItem: 10,
  s3PutsPerItem: 8,
  s3GetsPerItem: 20,
  s3ListsPerItem: 2,
  evidenceBytesPerItem: 500_000,
  emailsPerItem: 0,
};

const scenario: Scenario = {
  writes: 1000,
  batchSize: 100,
  concurrency: 2,
  browserMemoryMb: 2048,
  defaultMemoryMb: 256,
  coldInitSecondsBrowser: 10,
  coldInitSecondsOther: 0.5,
  cold: 0,
  itemsPerInvocation: 1,
  durationBasis: 'measured',
};

const line = (result: ReturnType<typeof computeCost>, prefix: string) => result.lines.find((l) => l.item.startsWith(prefix))!;

test('the prices file names its source and date, and the sizing comes from the measured sizing', () => {
  assert.match(prices.source, /re-check/);
  assert.match(prices.recordedOn, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(prices.dynamodb.onDemandPerWriteRequestUnit, 0.625 / 1e6);
  assert.equal(sizing.browserMemoryMb, 2048);
  assert.deepEqual(sizing.browserFunctions.sort(), ['browser-write', 'read-list', 'readback', 'snapshot']);
});

test('transitions, GSI writes, S3 requests and Lambda seconds are priced as counted', () => {
  const result = computeCost(work, prices, sizing, scenario);
  assert.equal(line(result, 'Step Functions').quantity, 1000 * 15 + 10 * 3);
  // The claims table has one GSI (byTenantTask): its writes count twice.
  assert.equal(line(result, 'DynamoDB writes').quantity, 1000 * (4 * 2 + 6));
  assert.equal(line(result, 'S3 PUT').quantity, 1000 * (8 + 2));
  const browserGbS = line(result, 'Lambda compute, browser').quantity;
  assert.ok(Math.abs(browserGbS - (1000 * 2 + 10 * 3) * 2) < 1e-6, `browser GB-s ${browserGbS}`);
  assert.equal(line(result, 'Lambda requests').quantity, 1000 * 2 + 10);
  assert.equal(line(result, 'Cold starts, browser').quantity, 0);
  assert.ok(Math.abs(result.total - result.lines.reduce((t, l) => t + l.cost, 0)) < 1e-12);
});

test('the CPU basis bills vendor wait plus CPU over the vCPU share of the memory size', () => {
  const result = computeCost(work, prices, sizing, { ...scenario, durationBasis: 'cpu' });
  const perWriteMs = 200 + 900 / (2048 / MB_PER_VCPU);
  const perBatchMs = 300 + 1000 / (2048 / MB_PER_VCPU);
  const expected = ((1000 * perWriteMs + 10 * perBatchMs) / 1000) * 2;
  assert.ok(Math.abs(line(result, 'Lambda compute, browser').quantity - expected) < 1e-6);
});

test('summarize-batch is priced at its own derived size, the other non-browser functions at 256 MB', () => {
  const summarizeMb = sizingOf('summarize-batch').memoryMb;
  assert.deepEqual(sizing.memoryMbOf, { 'summarize-batch': summarizeMb });
  const summarize = {
    fn: 'summarize-batch',
    browser: false,
    per: 'batch',
    invocations: 1,
    meanMs: 1000,
    vendorMs: 0,
    cpuMs: 900,
    growsWithBatch: false,
  } as const;
  const withSummary = computeCost({ ...work, functions: [...work.functions, summarize] }, prices, sizing, {
    ...scenario,
    durationBasis: 'cpu',
  });
  const without = computeCost(work, prices, sizing, { ...scenario, durationBasis: 'cpu' });
  const added = line(withSummary, 'Lambda compute, other').quantity - line(without, 'Lambda compute, other').quantity;
  // 10 batches × 900 ms of CPU at summarize-batch's vCPU share, billed at its memory size.
  const share = Math.min(summarizeMb / MB_PER_VCPU, 1);
  assert.ok(Math.abs(added - 10 * (900 / share / 1000) * (summarizeMb / 1024)) < 1e-6, `${added} GB-s`);
  assert.match(line(withSummary, 'Lambda compute, other').item, new RegExp(`256 MB; summarize-batch ${summarizeMb} MB`));
});

test('every lever moves the cost in the expected direction', () => {
  const base = { ...scenario, cold: 'per-batch' as const };
  const baseline = computeCost(work, prices, sizing, base).total;
  const cheaperOff = {
    ...work,
    tracing: 'off' as const,
    functions: work.functions.map((f) => (f.fn === 'browser-write' ? { ...f, meanMs: 1500 } : f)),
    s3PutsPerItem: 7,
  };
  const rows = levers({ work, scenario: base }, cheaperOff, prices, sizing);
  const find = (setting: RegExp) => rows.find((r) => setting.test(r.setting))!;
  assert.ok(find(/every invocation cold/).total > baseline);
  assert.ok(find(/never cold/).total < baseline);
  assert.ok(find(/batches of 12/).total > find(/batches of 1000/).total);
  assert.ok(find(/^10 items per/).total < baseline);
  assert.ok(find(/nothing got faster/).total > baseline);
  assert.ok(find(/trace off/).total < baseline);
  assert.equal(
    rows.find((r) => r.lever === 'state transitions'),
    undefined,
    'no folding lever while the workflow still takes as many transitions as before folding',
  );
  const folded = levers({ work: { ...work, transitionsPerItem: 9 }, scenario: base }, undefined, prices, sizing);
  assert.ok(folded.find((r) => r.lever === 'state transitions')!.delta > 0, 'the unfolded workflow costs more');
  for (const r of rows) assert.ok(Math.abs(r.delta - (r.total - baseline)) < 1e-12);
});
