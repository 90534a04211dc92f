import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadDeploymentConfig } from '../cdk/config.js';
import { TABLES } from '../src/contracts/table-definitions.js';
import { WORKFLOW_FUNCTIONS } from '../src/contracts/functions.js';
import { BROWSER_MEMORY_MB, sizingOf } from '../src/contracts/sizing.js';

/**
 * What 1000 guarded writes cost on AWS at list prices, computed from measured
 * per-item work (state transitions from execution histories, Lambda durations,
 * DynamoDB units, S3 requests, evidence bytes) and from the deployment's
 * sizing (Lambda memory from the CDK deployment config). Pure functions: the
 * same inputs give the same numbers, and every lever is the same model with
 * one assumption changed.
 */

const Price = z.number().nonnegative();
export const Prices = z
  .object({
    source: z.string().min(20, 'say where the prices come from and when'),
    recordedOn: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'recordedOn is a date such as 2025-06-01'),
    region: z.string().min(1),
    currency: z.literal('USD'),
    stepFunctions: z.object({ standardPerStateTransition: Price, note: z.string() }).strict(),
    lambda: z
      .object({
        x86PerGbSecond: Price,
        arm64PerGbSecond: Price,
        perRequest: Price,
        ephemeralPerGbSecondAbove512Mb: Price,
        note: z.string(),
      })
      .strict(),
    dynamodb: z.object({ onDemandPerWriteRequestUnit: Price, onDemandPerReadRequestUnit: Price, note: z.string() }).strict(),
    s3: z
      .object({
        standardPerPut: Price,
        standardPerGet: Price,
        standardPerGbMonth: Price,
        glacierInstantPerGbMonth: Price,
        note: z.string(),
      })
      .strict(),
    ses: z.object({ perEmail: Price, note: z.string() }).strict(),
    xray: z.object({ perTraceRecorded: Price, note: z.string() }).strict(),
  })
  .strict();
export type Prices = z.infer<typeof Prices>;

export function loadPrices(path = fileURLToPath(new URL('./prices.json', import.meta.url))): Prices {
  const parsed = Prices.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    throw new Error(`${path} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** Lambda sizing as deployed: memory from the measured sizing (src/contracts/sizing.ts), architecture and /tmp from cdk/lib/paperclip-function.ts. */
export interface Sizing {
  source: string;
  browserMemoryMb: number;
  defaultMemoryMb: number;
  /** BROWSER_SIZING.ephemeralStorage in cdk/lib/paperclip-function.ts. */
  browserEphemeralMb: number;
  /** @sparticuz/chromium is x86_64 only; the other handlers run on Graviton (cdk/lib/paperclip-function.ts). */
  browserArchitecture: 'x86_64';
  defaultArchitecture: 'arm64';
  browserFunctions: string[];
  /** Non-browser functions sized apart from defaultMemoryMb (summarize-batch), by name. */
  memoryMbOf?: Record<string, number>;
  evidenceRetentionDays: number;
  glacierAfterDays: number;
}

export function loadSizing(deployConfigPath = process.env['PAPERCLIP_DEPLOY_CONFIG'] ?? 'cdk/deploy-config.sample.json'): Sizing {
  const deploy = loadDeploymentConfig(deployConfigPath);
  return {
    source: deployConfigPath,
    browserMemoryMb: BROWSER_MEMORY_MB,
    // The per-item functions; summarize-batch (once per batch) gets more, see src/contracts/sizing.ts.
    defaultMemoryMb: sizingOf('complete').memoryMb,
    browserEphemeralMb: 2048,
    browserArchitecture: 'x86_64',
    defaultArchitecture: 'arm64',
    browserFunctions: WORKFLOW_FUNCTIONS.filter((f) => f.browser).map((f) => f.name),
    memoryMbOf: Object.fromEntries(
      WORKFLOW_FUNCTIONS.filter((f) => !f.browser && f.memoryMb !== sizingOf('complete').memoryMb).map((f) => [f.name, f.memoryMb]),
    ),
    evidenceRetentionDays: deploy.evidence.retentionDays,
    glacierAfterDays: deploy.evidence.glacierAfterDays,
  };
}

/** One Lambda function's measured work. */
export interface FunctionWork {
  fn: string;
  browser: boolean;
  /** 'item': invoked per guarded write; 'batch': once per batch. */
  per: 'item' | 'batch';
  /** Invocations per item (retries included) or per batch. */
  invocations: number;
  /** Mean billed duration of one invocation, ms (per batch: at the measured batch size). */
  meanMs: number;
  /** Of which the vendor was busy answering, ms; it does not shrink with more memory. */
  vendorMs: number;
  /**
   * CPU time used during the invocation (Node process and Chromium tree; not the forked AWS emulators,
   * whose work is DynamoDB's, S3's and SES's on AWS), ms: the work a dedicated vCPU would do.
   */
  cpuMs: number;
  /** Batch functions whose work grows with the batch (sealing every item's evidence). */
  growsWithBatch: boolean;
}

/** Per-write work measured from real executions of the guarded path. */
export interface MeasuredWork {
  label: string;
  tracing: 'on' | 'off';
  itemsPerBatchMeasured: number;
  /** Child guarded-write states plus the batch Map iteration states, retries included. */
  transitionsPerItem: number;
  /** ReadList, ProcessItems, Summarize: once per batch. */
  transitionsPerBatch: number;
  /** Entries of browser task states (Snapshot, BrowserWrite, Readback) per item. */
  browserStateTransitionsPerItem: number;
  functions: FunctionWork[];
  /** Base-table units per item as DynamoDB reported them, by table id. */
  dynamoWriteUnitsByTable: Record<string, number>;
  dynamoReadUnitsPerItem: number;
  s3PutsPerItem: number;
  s3GetsPerItem: number;
  s3ListsPerItem: number;
  evidenceBytesPerItem: number;
  emailsPerItem: number;
}

export interface Scenario {
  writes: number;
  batchSize: number;
  /** Map concurrency: how many environments of each function a batch keeps busy. */
  concurrency: number;
  browserMemoryMb: number;
  defaultMemoryMb: number;
  /** Extra billed seconds for a cold browser environment (INIT + Chromium launch). Published 3.6-10 s. */
  coldInitSecondsBrowser: number;
  coldInitSecondsOther: number;
  /** How cold starts arise. 'per-batch': every batch starts cold (batches hours apart), warm within a batch. A number: that share of all invocations is cold. */
  cold: 'per-batch' | number;
  /** Items handled by one invocation of each browser function (1 today). */
  itemsPerInvocation: number;
  /**
   * 'measured': billed duration = the wall time measured here (inflated on a loaded machine).
   * 'cpu': billed duration = vendor wait + CPU time / the vCPU share Lambda gives that memory size.
   */
  durationBasis: 'measured' | 'cpu';
}

/** Lambda gives one full vCPU at 1,769 MB and CPU in proportion to memory. */
export const MB_PER_VCPU = 1769;

export interface CostLine {
  item: string;
  quantity: number;
  unit: string;
  cost: number;
}

export interface CostResult {
  scenario: Scenario;
  lines: CostLine[];
  /** Cost of the writes themselves (requests, compute, transitions, cold starts). */
  total: number;
  perWrite: number;
  /** Evidence kept for the retention period (Standard, then Glacier Instant Retrieval). */
  evidenceRetention: number;
  coldShareBrowser: number;
}

function gsiCount(tableId: string): number {
  return TABLES.find((t) => t.id === tableId)?.indexes.length ?? 0;
}

/** A write to a table with GSIs (projection ALL) also writes each index. */
export function billedWriteUnitsPerItem(work: MeasuredWork): number {
  return Object.entries(work.dynamoWriteUnitsByTable).reduce((total, [table, units]) => total + units * (1 + gsiCount(table)), 0);
}

/** Duration at another memory size: the part not spent waiting on the vendor scales with the CPU share, which Lambda ties to memory. */
export function scaledMs(f: FunctionWork, measuredAtMb: number, memoryMb: number): number {
  return f.vendorMs + Math.max(0, f.meanMs - f.vendorMs) * (measuredAtMb / memoryMb);
}

export function computeCost(work: MeasuredWork, prices: Prices, sizing: Sizing, scenario: Scenario): CostResult {
  const { writes, batchSize, concurrency } = scenario;
  const batches = Math.ceil(writes / batchSize);
  const k = scenario.itemsPerInvocation;
  const lines: CostLine[] = [];
  // Every line is a quantity at a unit price.
  const add = (item: string, quantity: number, unit: string, pricePerUnit: number) =>
    lines.push({ item, quantity, unit, cost: quantity * pricePerUnit });

  const transitions =
    writes * (work.transitionsPerItem - work.browserStateTransitionsPerItem * (1 - 1 / k)) + batches * work.transitionsPerBatch;
  add('Step Functions state transitions', transitions, 'transitions', prices.stepFunctions.standardPerStateTransition);

  let browserGbS = 0;
  let otherGbS = 0;
  let browserEphemeralGbS = 0;
  let requests = 0;
  let browserColdGbS = 0;
  let otherColdGbS = 0;
  let browserInvocations = 0;
  let browserColds = 0;
  for (const f of work.functions) {
    // A function sized apart (summarize-batch) keeps its own memory in every scenario.
    const own = f.browser ? undefined : sizing.memoryMbOf?.[f.fn];
    const memoryMb = f.browser ? scenario.browserMemoryMb : (own ?? scenario.defaultMemoryMb);
    const measuredAt = f.browser ? sizing.browserMemoryMb : (own ?? sizing.defaultMemoryMb);
    const ms = scenario.durationBasis === 'cpu' ? f.vendorMs + f.cpuMs / (memoryMb / MB_PER_VCPU) : scaledMs(f, measuredAt, memoryMb);
    const perBatchItems = f.per === 'item' ? batchSize : 1;
    const batchShare = f.growsWithBatch ? batchSize / work.itemsPerBatchMeasured : 1;
    const invocationsPerBatch = f.per === 'item' ? (batchSize * f.invocations) / (f.browser ? k : 1) : f.invocations;
    const invocations = batches * invocationsPerBatch;
    const seconds = f.per === 'item' ? (writes * f.invocations * ms) / 1000 : (batches * f.invocations * ms * batchShare) / 1000;
    const gbS = seconds * (memoryMb / 1024);
    requests += invocations;
    let colds: number;
    if (scenario.cold === 'per-batch') colds = batches * Math.min(concurrency, Math.ceil(invocationsPerBatch), perBatchItems);
    else colds = invocations * scenario.cold;
    const coldGbS = colds * (f.browser ? scenario.coldInitSecondsBrowser : scenario.coldInitSecondsOther) * (memoryMb / 1024);
    if (f.browser) {
      browserGbS += gbS;
      browserEphemeralGbS += (seconds * Math.max(0, sizing.browserEphemeralMb - 512)) / 1024;
      browserColdGbS += coldGbS;
      browserInvocations += invocations;
      browserColds += colds;
    } else {
      otherGbS += gbS;
      otherColdGbS += coldGbS;
    }
  }
  add(`Lambda compute, browser functions (x86_64, ${scenario.browserMemoryMb} MB)`, browserGbS, 'GB-s', prices.lambda.x86PerGbSecond);
  add(
    `Lambda compute, other functions (arm64, ${scenario.defaultMemoryMb} MB${Object.entries(sizing.memoryMbOf ?? {})
      .map(([fn, mb]) => `; ${fn} ${mb} MB`)
      .join('')})`,
    otherGbS,
    'GB-s',
    prices.lambda.arm64PerGbSecond,
  );
  add('Lambda /tmp above 512 MB (browser functions)', browserEphemeralGbS, 'GB-s', prices.lambda.ephemeralPerGbSecondAbove512Mb);
  add('Lambda requests', requests, 'requests', prices.lambda.perRequest);
  add(
    `Cold starts, browser (${scenario.coldInitSecondsBrowser} s INIT + launch each)`,
    browserColdGbS,
    'GB-s',
    prices.lambda.x86PerGbSecond,
  );
  add(`Cold starts, other (${scenario.coldInitSecondsOther} s each)`, otherColdGbS, 'GB-s', prices.lambda.arm64PerGbSecond);

  const wru = writes * billedWriteUnitsPerItem(work);
  const rru = writes * work.dynamoReadUnitsPerItem;
  add('DynamoDB writes (claim, transitions, audit, takeover; GSIs included)', wru, 'WRU', prices.dynamodb.onDemandPerWriteRequestUnit);
  add('DynamoDB reads (claim checks, audit chain heads, evidence pages)', rru, 'RRU', prices.dynamodb.onDemandPerReadRequestUnit);
  const puts = writes * (work.s3PutsPerItem + work.s3ListsPerItem);
  add('S3 PUT + LIST (evidence objects, pages, seal)', puts, 'requests', prices.s3.standardPerPut);
  const gets = writes * work.s3GetsPerItem;
  add('S3 GET (sealing re-reads evidence)', gets, 'requests', prices.s3.standardPerGet);
  const emails = writes * work.emailsPerItem;
  add('SES approval emails', emails, 'emails', prices.ses.perEmail);

  const total = lines.reduce((s, l) => s + l.cost, 0);
  const gb = (writes * work.evidenceBytesPerItem) / 1e9;
  const standardMonths = Math.min(sizing.glacierAfterDays, sizing.evidenceRetentionDays) / 30;
  const glacierMonths = Math.max(0, sizing.evidenceRetentionDays - sizing.glacierAfterDays) / 30;
  const evidenceRetention = gb * (standardMonths * prices.s3.standardPerGbMonth + glacierMonths * prices.s3.glacierInstantPerGbMonth);
  return {
    scenario,
    lines,
    total,
    perWrite: total / writes,
    evidenceRetention,
    coldShareBrowser: browserInvocations ? browserColds / browserInvocations : 0,
  };
}

/** State transitions per item the workflow needed before its Pass states were folded into task results. */
export const TRANSITIONS_BEFORE_FOLDING = 15;

export interface Lever {
  lever: string;
  setting: string;
  total: number;
  delta: number;
  deltaPercent: number;
}

/** The levers that move the cost, each computed by the same model with one thing changed. */
export function levers(
  base: { work: MeasuredWork; scenario: Scenario },
  tracingOff: MeasuredWork | undefined,
  prices: Prices,
  sizing: Sizing,
): Lever[] {
  const baseline = computeCost(base.work, prices, sizing, base.scenario).total;
  const out: Lever[] = [];
  const push = (lever: string, setting: string, total: number) =>
    out.push({ lever, setting, total, delta: total - baseline, deltaPercent: baseline ? ((total - baseline) / baseline) * 100 : 0 });
  const run = (changes: Partial<Scenario>, work = base.work) => computeCost(work, prices, sizing, { ...base.scenario, ...changes }).total;

  for (const mb of [2560, 3008])
    push('browser memory', `${mb} MB (vendor wait unchanged, the rest scales with CPU share)`, run({ browserMemoryMb: mb }));
  // The pessimistic case: more memory buys nothing (the work is waiting, not computing), so the same seconds cost more.
  const stretch = 3008 / base.scenario.browserMemoryMb;
  push(
    'browser memory',
    '3008 MB if nothing got faster (no CPU benefit)',
    computeCost(
      {
        ...base.work,
        functions: base.work.functions.map((f) =>
          f.browser
            ? { ...f, meanMs: f.vendorMs + (f.meanMs - f.vendorMs) * (3008 / sizing.browserMemoryMb), cpuMs: f.cpuMs * stretch }
            : f,
        ),
      },
      prices,
      sizing,
      { ...base.scenario, browserMemoryMb: 3008 },
    ).total,
  );
  push('warm reuse', 'every invocation cold (no reuse)', run({ cold: 1 }));
  push('warm reuse', 'never cold (provisioned or always busy)', run({ cold: 0 }));
  for (const size of [12, 1000]) push('warm reuse', `batches of ${size} (every batch starts cold)`, run({ batchSize: size }));
  push('warm reuse', `cold start ${3.6} s instead of ${base.scenario.coldInitSecondsBrowser} s`, run({ coldInitSecondsBrowser: 3.6 }));
  for (const k of [5, 10])
    push('several items per invocation', `${k} items per browser-function invocation`, run({ itemsPerInvocation: k }));
  if (tracingOff) push('tracing', 'Playwright trace off for the write (measured run)', run({}, tracingOff));
  // The workflow before its Pass states were folded into task results and its two Choices merged into one.
  if (base.work.transitionsPerItem < TRANSITIONS_BEFORE_FOLDING)
    push(
      'state transitions',
      `${TRANSITIONS_BEFORE_FOLDING} per item, as before Pass states were folded into task results`,
      run({}, { ...base.work, transitionsPerItem: TRANSITIONS_BEFORE_FOLDING }),
    );
  return out;
}
