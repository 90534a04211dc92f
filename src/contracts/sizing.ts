/**
 * Each function's memory and timeout, derived from what the benchmark
 * measured (BENCHMARKS.md, "AWS cost model": Lambda <fn>: invocations × mean
 * ms (vendor ms, CPU ms)) by one rule, so the numbers the CDK app deploys and
 * the local Step Functions runner enforces (src/contracts/functions.ts) can be
 * traced to a measurement. docs/deploy.md's sizing table is rendered from
 * here (`sizingTable()`), and a test keeps the two equal.
 *
 * The rule, per function:
 * 1. CPU share at M MB: min(M / 1,769, 1) of a vCPU (Lambda gives one vCPU at
 *    1,769 MB; a Node handler runs its work on one thread, so more buys nothing).
 * 2. Own time on Lambda = units × (vendor ms + CPU ms ÷ share): the benchmark's
 *    CPU, not its wall time (on the shared 2-core machine most of the wall time
 *    is waiting for a core), with the vendor's own answer time as measured.
 * 3. Need = own time × SAFETY + the allowance for what the benchmark cannot
 *    measure (cold start, a real vendor's latency up to the timeouts the code
 *    uses, the readback deadline), each named below.
 * 4. Memory: browser functions BROWSER_MEMORY_MB; the others the smallest of
 *    MEMORY_STEPS_MB whose need fits Lambda's 900 s (and at or above the
 *    function's measured memory floor, where it has one), else the last step.
 * 5. Timeout: the smallest of TIMEOUT_STEPS_S at or above the need; 900 s
 *    (Lambda's maximum) when none is, and the table says the need is not met.
 */

/** One vCPU per 1,769 MB (Lambda documentation, "Configuring function memory"). */
export const MB_PER_VCPU = 1769;
export const SAFETY = 3;
export const MEMORY_STEPS_MB = [256, 512, 1024, MB_PER_VCPU] as const;
export const TIMEOUT_STEPS_S = [30, 60, 120, 300, 600, 900] as const;
export const LAMBDA_MAX_TIMEOUT_S = 900;
/**
 * @sparticuz/chromium asks for at least 1,600 MB; the benchmark's peak for the
 * browser with its contexts during the guarded run was 1,540 MiB RSS, and
 * 1,540 × 1.25 rounded up to a multiple of 256 is 2,048.
 */
export const BROWSER_MEMORY_MB = 2048;
/** The largest batch the config allows (limits.max_batch_items), which Summarize reads in one invocation. */
export const MAX_BATCH_ITEMS = 10_000;
/** Headroom over a measured peak of memory (the same 1.25 as the browser's). */
export const MEMORY_HEADROOM = 1.25;

/** Per invocation, from BENCHMARKS.md (`npm run bench -- --items 12 --concurrency 1 --repeat 1 --tracing on`). */
export interface Measured {
  wallMs: number;
  vendorMs: number;
  cpuMs: number;
}

export interface SizingInput {
  name: string;
  browser: boolean;
  measured: Measured;
  /** Where the figure comes from: the benchmark's own line, or the measured function it is taken from and why. */
  measuredAs: string;
  /** Units of the measured work in the largest invocation (1, or the items Summarize reads). */
  units: number;
  allowanceSeconds: number;
  allowanceWhy: string;
  /** The least memory the function may get: a measured peak, scaled to `units`, × MEMORY_HEADROOM. */
  memoryFloorMb?: number;
  memoryFloorWhy?: string;
}

/**
 * Summarize at batch scale (BENCHMARKS.md, "Summarize at batch scale", `npx tsx bench/summarize-scale.ts 2000`):
 * the real summarizeBatch over 2,000 settled items (claim, 4 audit events, 3 objects each) with the emulators in a
 * forked process, so the CPU and memory are Summarize's own, not an upper bound. Measured 2026-12-04 on the idle
 * 2-core machine by `npm run bench -- --items 12 --concurrency 1 --repeat 1 --tracing on` (the highest of the runs
 * made that day, and the one in BENCHMARKS.md: a run on the loaded machine measured 8.5 ms of CPU per item, this one 17.3).
 */
export const SUMMARIZE_SCALE = { items: 2000, wallMs: 55_704, cpuMs: 34_540, rssBeforeMiB: 527.9, peakRssMiB: 614.6 };
/**
 * What a summary waits for besides CPU, per item: the item folder's objects hashed (S3 answers with the checksum
 * it stored, one request each, 3–4 objects and the page), its audit chain read (one query), its record read (once:
 * the batch page reuses it), its page stored. S3_FAN_OUT (16) of them are in flight at a time.
 */
const SUMMARIZE_ROUND_TRIPS_PER_ITEM = 8;
const AWS_ROUND_TRIP_MS = 30;
const SUMMARIZE_FAN_OUT = 16;
const summarizeWaitSeconds = Math.ceil((MAX_BATCH_ITEMS * SUMMARIZE_ROUND_TRIPS_PER_ITEM * AWS_ROUND_TRIP_MS) / SUMMARIZE_FAN_OUT / 1000);
const n = (value: number) => value.toLocaleString('en-US');
/** The process's resident set at the measured start, plus its growth per item scaled to the largest batch. */
const summarizePeakMiB =
  SUMMARIZE_SCALE.rssBeforeMiB + ((SUMMARIZE_SCALE.peakRssMiB - SUMMARIZE_SCALE.rssBeforeMiB) * MAX_BATCH_ITEMS) / SUMMARIZE_SCALE.items;

/**
 * ReadList at 10,000 rows (`npx tsx bench/load-more-scale.ts 10000 100`, 2026-12-05, the shared 2-core machine at a
 * load average of 21): the real readList over a list paged by "load more", 100 rows per press (99 presses), the page
 * redrawing the whole list after each press as single-page apps do. Each press is judged by a row count, the button
 * is found by its role once and pressed as an element (2 lookups in all), and the rows are read once (155 page
 * evaluations, 10,000 rows returned). Before, every press resolved the button's role locator three times, each a
 * walk of the whole grown list: 306,458 ms for the same read on the same machine and load (277,188 ms measured
 * earlier at a lower load). What is left is mostly Chromium redrawing and laying out a list that grows to 10,000
 * rows on every press. Only the wall time was measured (Chromium's CPU is another process): it stands for the CPU,
 * an upper bound.
 */
export const READ_LIST_SCALE = { rows: 10_000, perPress: 100, wallMs: 167_935, evaluations: 155, buttonLookups: 2 };
/**
 * A late close at 10,000 items (`npx tsx --expose-gc bench/late-seal-scale.ts 10000`, 2026-12-05, the emulators
 * in a forked process): the largest of three closes after the seal (an approved item, an inverse, the write it
 * undid), each 20–22 requests whatever the batch's size, 258–282 ms CPU, the heap up 23.6 MiB (the 3.8 MB batch
 * page read, patched and stored), 3.2–3.6 s wall on the loaded machine (S3 emulator time included).
 */
export const LATE_CLOSE_SCALE = { items: 10_000, wallMs: 3_645, cpuMs: 282, heapGrowthMiB: 23.6, requests: 22 };

/** Figures of BENCHMARKS.md generated 2026-12-04 (12 items, concurrency 1, tracing on). */
const BENCH = {
  validateRoute: { wallMs: 21, vendorMs: 1, cpuMs: 12 },
  claim: { wallMs: 28, vendorMs: 0, cpuMs: 13 },
  snapshotApi: { wallMs: 40, vendorMs: 0, cpuMs: 22 },
  browserWrite: { wallMs: 1415, vendorMs: 4, cpuMs: 1056 },
  readback: { wallMs: 500, vendorMs: 2, cpuMs: 385 },
  complete: { wallMs: 106, vendorMs: 0, cpuMs: 79 },
  readList: { wallMs: READ_LIST_SCALE.wallMs, vendorMs: 0, cpuMs: READ_LIST_SCALE.wallMs },
  lateClose: { wallMs: LATE_CLOSE_SCALE.wallMs, vendorMs: 0, cpuMs: LATE_CLOSE_SCALE.cpuMs },
  // Summarize's own cost per item at 2,000 items (SUMMARIZE_SCALE), fixed costs (batch page, seal) spread over the items.
  summarizePerItem: {
    wallMs: SUMMARIZE_SCALE.wallMs / SUMMARIZE_SCALE.items,
    vendorMs: 0,
    cpuMs: SUMMARIZE_SCALE.cpuMs / SUMMARIZE_SCALE.items,
  },
} satisfies Record<string, Measured>;

/**
 * The longest wait for a vendor-session slot the config allows (`vendor_sessions.wait_seconds`, src/config/schema.ts):
 * the browser functions are sized for it, so no config the loader accepts outwaits them.
 */
export const MAX_SLOT_WAIT_SECONDS = 120;
/**
 * The longest undo window a site-pack action may declare (`undoWindowSeconds`, src/sitepack/schema.ts). The write sits
 * it out on its page after each stage's last commit click, plus UNDO_WINDOW_GRACE_SECONDS
 * (src/app/guarded-write/write.ts): the write step is sized for one stage's window at this maximum; an action whose
 * stages add up to more is refused by the loader (browserStepBudget).
 */
export const MAX_UNDO_WINDOW_SECONDS = 60;
export const UNDO_WINDOW_GRACE_SECONDS = 1;

/** What every browser step may spend besides its slot wait and undo windows. */
const BROWSER_FIXED = {
  seconds: 10 + 10 + 4 * 30 + 15,
  why: 'cold start 10 s, login 10 s, 4 vendor pages/actions × 30 s (Playwright default), readback deadline 15 s',
};
/**
 * A browser step: Chromium cold start, the wait for a vendor session slot at the config's maximum, a login, four vendor
 * page loads or actions at Playwright's 30 s default, the readback deadline.
 */
const BROWSER_ALLOWANCE = {
  allowanceSeconds: BROWSER_FIXED.seconds + MAX_SLOT_WAIT_SECONDS,
  allowanceWhy: `${BROWSER_FIXED.why}, vendor session slot wait up to ${MAX_SLOT_WAIT_SECONDS} s (vendor_sessions.wait_seconds at most)`,
};
/** The write step: a browser step that also sits out one stage's undo window at the pack's maximum. */
const WRITE_ALLOWANCE = {
  allowanceSeconds: BROWSER_ALLOWANCE.allowanceSeconds + MAX_UNDO_WINDOW_SECONDS + UNDO_WINDOW_GRACE_SECONDS,
  allowanceWhy:
    `${BROWSER_ALLOWANCE.allowanceWhy}, one undo window up to ${MAX_UNDO_WINDOW_SECONDS} s + ${UNDO_WINDOW_GRACE_SECONDS} s` +
    ' (undoWindowSeconds at most)',
};
/** A step of a few AWS calls: cold start and the SDK's retries. */
const AWS_CALLS_ALLOWANCE = { allowanceSeconds: 5, allowanceWhy: 'cold start 0.5 s, SDK retries of a few AWS calls' };

export const SIZING_INPUTS: readonly SizingInput[] = [
  {
    name: 'read-list',
    browser: true,
    measured: BENCH.readList,
    measuredAs:
      `ReadList of ${n(READ_LIST_SCALE.rows)} rows by load more, ${READ_LIST_SCALE.perPress} per press, the list redrawn` +
      ' after each press (bench/load-more-scale.ts); wall time as CPU',
    units: 1,
    ...BROWSER_ALLOWANCE,
  },
  {
    name: 'validate-route',
    browser: false,
    measured: BENCH.validateRoute,
    measuredAs: 'ValidateRoute',
    units: 1,
    allowanceSeconds: 15,
    allowanceWhy: "cold start 0.5 s, the vendor API's 10 s timeout for the owner lookup, SDK retries",
  },
  { name: 'claim', browser: false, measured: BENCH.claim, measuredAs: 'Claim', units: 1, ...AWS_CALLS_ALLOWANCE },
  {
    name: 'request-approval',
    browser: false,
    measured: BENCH.complete,
    measuredAs: 'not in the benchmark (no approval items); as Complete, a few DynamoDB calls and an SES send',
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
  {
    name: 'snapshot',
    browser: true,
    measured: BENCH.readback,
    measuredAs: 'as Readback: the benchmark took the browserless API path (40 ms); approval and API-less items open a page',
    units: 1,
    ...BROWSER_ALLOWANCE,
  },
  { name: 'browser-write', browser: true, measured: BENCH.browserWrite, measuredAs: 'BrowserWrite', units: 1, ...WRITE_ALLOWANCE },
  { name: 'readback', browser: true, measured: BENCH.readback, measuredAs: 'Readback', units: 1, ...BROWSER_ALLOWANCE },
  {
    name: 'compensate',
    browser: false,
    measured: BENCH.complete,
    measuredAs: 'not in the benchmark; as Complete (claim read, audit appends), the inverse runs as its own execution',
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
  {
    name: 'complete',
    browser: false,
    measured: BENCH.lateClose,
    measuredAs: `its largest close: an item closing after the seal of a batch of ${n(LATE_CLOSE_SCALE.items)} (bench/late-seal-scale.ts)`,
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
  {
    name: 'takeover',
    browser: false,
    measured: BENCH.lateClose,
    measuredAs: 'as Complete (a takeover after the seal closes the same way) plus one SES send',
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
  {
    name: 'summarize-batch',
    browser: false,
    measured: BENCH.summarizePerItem,
    measuredAs:
      `Summarize alone at scale: ${n(SUMMARIZE_SCALE.wallMs)} ms (CPU ${n(SUMMARIZE_SCALE.cpuMs)})` +
      ` for ${n(SUMMARIZE_SCALE.items)} settled items, per item`,
    units: MAX_BATCH_ITEMS,
    allowanceSeconds: 1 + summarizeWaitSeconds,
    allowanceWhy:
      `cold start 0.5 s; S3/DynamoDB waits: ${n(MAX_BATCH_ITEMS)} items × ${SUMMARIZE_ROUND_TRIPS_PER_ITEM} round trips` +
      ` × ${AWS_ROUND_TRIP_MS} ms ÷ ${SUMMARIZE_FAN_OUT} in flight = ${summarizeWaitSeconds} s`,
    memoryFloorMb: Math.ceil(summarizePeakMiB * MEMORY_HEADROOM),
    memoryFloorWhy:
      `peak RSS ${SUMMARIZE_SCALE.peakRssMiB} MiB at ${n(SUMMARIZE_SCALE.items)} items (${SUMMARIZE_SCALE.rssBeforeMiB} before)` +
      ` scaled to ${n(MAX_BATCH_ITEMS)}: ${Math.round(summarizePeakMiB)} MiB × ${MEMORY_HEADROOM}`,
  },
  {
    name: 'write-digests',
    browser: false,
    measured: BENCH.complete,
    measuredAs: 'not in the benchmark; as Complete (S3 listings and reads, one KMS Sign and one put per day digested)',
    units: 1,
    allowanceSeconds: 60,
    allowanceWhy: 'cold start 0.5 s; catching up after an outage: 4 round trips × 30 ms per day digested, 400 days of a tenant = 48 s',
  },
  {
    name: 'start-scheduled-batch',
    browser: false,
    measured: BENCH.complete,
    measuredAs: 'not in the benchmark; as Complete (one secret read, one StartExecution)',
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
  {
    name: 'approval-http',
    browser: false,
    measured: BENCH.complete,
    measuredAs: 'not in the benchmark; as Complete (an approval read and update, an audit append, a page)',
    units: 1,
    ...AWS_CALLS_ALLOWANCE,
  },
];

export interface DerivedSizing extends SizingInput {
  memoryMb: number;
  cpuShare: number;
  ownSeconds: number;
  needSeconds: number;
  timeoutSeconds: number;
  /** False when even Lambda's maximum does not cover the need: the table says so. */
  fits: boolean;
}

const cpuShare = (memoryMb: number) => Math.min(memoryMb / MB_PER_VCPU, 1);

function need(input: SizingInput, memoryMb: number): { own: number; need: number } {
  const own = (input.units * (input.measured.vendorMs + input.measured.cpuMs / cpuShare(memoryMb))) / 1000;
  return { own, need: own * SAFETY + input.allowanceSeconds };
}

export function deriveSizing(input: SizingInput): DerivedSizing {
  const floor = input.memoryFloorMb ?? 0;
  const memoryMb = input.browser
    ? BROWSER_MEMORY_MB
    : (MEMORY_STEPS_MB.find((mb) => mb >= floor && need(input, mb).need <= LAMBDA_MAX_TIMEOUT_S) ??
      MEMORY_STEPS_MB[MEMORY_STEPS_MB.length - 1]!);
  const { own, need: needed } = need(input, memoryMb);
  const step = TIMEOUT_STEPS_S.find((s) => s >= needed);
  return {
    ...input,
    memoryMb,
    cpuShare: cpuShare(memoryMb),
    ownSeconds: own,
    needSeconds: needed,
    timeoutSeconds: step ?? LAMBDA_MAX_TIMEOUT_S,
    fits: step !== undefined,
  };
}

/** The derived size of a function by name; throws for a function the table does not list. */
export function sizingOf(name: string): DerivedSizing {
  const input = SIZING_INPUTS.find((i) => i.name === name);
  if (!input) throw new Error(`function "${name}" has no row in SIZING_INPUTS (src/contracts/sizing.ts); add its measurement`);
  return deriveSizing(input);
}

/** What a browser step may spend as a config and pack declare it: the slot wait, and the undo windows it sits out. */
export interface DeclaredWaits {
  /** config `vendor_sessions.wait_seconds`. */
  slotWaitSeconds: number;
  /** The action's `undoWindowSeconds` (0 when it has none), sat out once per stage that commits. */
  undoWindowSeconds: number;
  stages: number;
}

/**
 * Whether a browser step of `name` can finish inside its deployed timeout with the waits a config and pack declare:
 * its measured time × SAFETY, the fixed allowance (BROWSER_FIXED), the slot wait, and each stage's undo window (+ grace).
 * The deployed timeouts are sized for the declared maxima (MAX_SLOT_WAIT_SECONDS, one MAX_UNDO_WINDOW_SECONDS); config
 * is read at run time, so the loader asks this for the actual values (src/config/runtime.ts).
 */
export function browserStepBudget(
  name: string,
  declared: DeclaredWaits,
): { needSeconds: number; timeoutSeconds: number; fits: boolean; otherSeconds: number } {
  const size = sizingOf(name);
  if (!size.browser) throw new Error(`function "${name}" is not a browser function; only browser steps wait for slots and undo windows`);
  const otherSeconds = size.ownSeconds * SAFETY + BROWSER_FIXED.seconds;
  const undo = declared.undoWindowSeconds > 0 ? declared.stages * (declared.undoWindowSeconds + UNDO_WINDOW_GRACE_SECONDS) : 0;
  const needSeconds = otherSeconds + declared.slotWaitSeconds + undo;
  return { needSeconds, timeoutSeconds: size.timeoutSeconds, fits: needSeconds <= size.timeoutSeconds, otherSeconds };
}

const seconds = (s: number) => (s < 10 ? s.toFixed(2) : s.toFixed(0));

/** The sizing table of docs/deploy.md, rendered from the measurements and the rule. */
export function sizingTable(): string {
  const rows = SIZING_INPUTS.map(deriveSizing).map((d) =>
    [
      `\`${d.name}\``,
      `${d.measured.wallMs.toFixed(0)} / ${d.measured.vendorMs.toFixed(0)} / ${d.measured.cpuMs.toFixed(0)}`,
      d.measuredAs,
      d.units === 1 ? '1' : `${d.units.toLocaleString('en-US')} items`,
      d.memoryFloorMb ? `${d.memoryMb} (at least ${d.memoryFloorMb}: ${d.memoryFloorWhy})` : `${d.memoryMb}`,
      d.cpuShare.toFixed(2),
      seconds(d.ownSeconds),
      `${d.allowanceSeconds}: ${d.allowanceWhy}`,
      seconds(d.needSeconds),
      d.fits ? `${d.timeoutSeconds}` : `${d.timeoutSeconds} (**need not met**)`,
    ].join(' | '),
  );
  return [
    '| Function | Measured ms: wall / vendor / CPU | Measured as | Units | Memory MB | vCPU share | Own s | Allowance s | Need s | Timeout s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}
