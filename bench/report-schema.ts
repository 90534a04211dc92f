import { z } from 'zod';

/**
 * The benchmark report: what BENCHMARKS.md is rendered from and what the
 * in-suite test checks field by field. Numbers may be NaN only where a level
 * was not run (e.g. no concurrency 2 in a small run).
 */

/** NaN marks a figure that needs a level this run did not include (e.g. concurrency 2). */
const num = z.union([z.number(), z.nan()]);
export const SummarySchema = z.object({ n: num, median: num, p95: num, mean: num, min: num, max: num }).strict();
const Memory = z.object({ processes: num, rssMiB: num, pssMiB: num }).strict();
const RunPath = z.enum(['raw', 'raw-evidence', 'guarded']);
const Tracing = z.enum(['on', 'off']);
/** Which runs a row is about: the path, its tracing mode (null for the scripts, which have none) and the concurrency. */
const RunKey = { path: RunPath, tracing: Tracing.nullable(), concurrency: num };

export const RunRecordSchema = z
  .object({
    path: RunPath,
    concurrency: num,
    tracing: Tracing.nullable(),
    repeat: num,
    /** CPU other processes on the machine used during the run (all cores' busy time minus the benchmark's own). */
    otherCpuMs: num,
    items: num,
    status: z.string(),
    wallMs: num,
    throughputPerMin: num,
    itemLatencyMs: SummarySchema,
    outcomes: z.record(z.string(), num),
    journal: z.object({ mutations: num, distinctBills: num, exactlyOnePerItem: z.boolean() }).strict(),
    vendor: z.object({ requests: num, sumMs: num, busyMs: num }).strict(),
    /**
     * CPU used during the run: this Node process (Paperclip's handlers, Playwright client, the simulator and the
     * Step Functions runner) and the Chromium tree; for guarded runs also, apart and in neither, the forked
     * DynamoDB, S3 and SES emulators (on AWS those services' work, not Lambda's).
     */
    cpu: z.object({ nodeMs: num, chromiumMs: num, emulatorsMs: num.optional() }).strict(),
    peakBrowser: Memory.extend({ samples: num }).strict(),
  })
  .strict();
export type RunRecord = z.infer<typeof RunRecordSchema>;

const StepRow = z
  .object({
    step: z.string(),
    medianMs: num,
    meanMs: num,
    vendorMs: num,
    paperclipMs: num,
    cpuMs: z.object({ totalMs: num, nodeMs: num, chromiumMs: num }).strict(),
    sharePercent: num,
    vendorRequestsPerItem: num,
    /** Browser sessions taken in this step per item, and how many of them needed a new context or a login. */
    sessionsPerItem: num,
    newContextsPerItem: num,
    loginsPerItem: num,
    requestKinds: z.record(z.string(), num),
  })
  .strict();
export type StepRow = z.infer<typeof StepRow>;

const Split = z
  .object({
    itemMs: SummarySchema,
    /** The first item of each run (mean over runs): it pays for new contexts and logins. */
    firstItemMs: num,
    vendorMs: num,
    ownMs: num,
    cpuMs: z.object({ totalMs: num, nodeMs: num, chromiumMs: num }).strict(),
    /**
     * Guarded only: the forked DynamoDB, S3 and SES emulators' CPU per item. Not in cpuMs: on AWS it is
     * those services' work, not Lambda's.
     */
    emulatorsCpuMs: num.optional(),
    contextsPerItem: num,
    /** Browser sessions used per item; more than contexts when kept contexts are reused. */
    sessionsPerItem: num,
    vendorRequestsPerItem: num,
    /** Every item but the first of each run: what an item costs once sessions exist. */
    steadyVendorRequestsPerItem: num,
    steadySessionsPerItem: num,
    loginsPerItem: num,
    requestKinds: z.record(z.string(), num),
  })
  .strict();

const FunctionWork = z
  .object({
    fn: z.string(),
    browser: z.boolean(),
    per: z.enum(['item', 'batch']),
    invocations: num,
    meanMs: num,
    vendorMs: num,
    cpuMs: num,
    growsWithBatch: z.boolean(),
  })
  .strict();
const MeasuredWork = z
  .object({
    label: z.string(),
    tracing: Tracing,
    itemsPerBatchMeasured: num,
    transitionsPerItem: num,
    transitionsPerBatch: num,
    browserStateTransitionsPerItem: num,
    functions: z.array(FunctionWork).min(1),
    dynamoWriteUnitsByTable: z.record(z.string(), num),
    dynamoReadUnitsPerItem: num,
    s3PutsPerItem: num,
    s3GetsPerItem: num,
    s3ListsPerItem: num,
    evidenceBytesPerItem: num,
    emailsPerItem: num,
  })
  .strict();
const Scenario = z
  .object({
    writes: num,
    batchSize: num,
    concurrency: num,
    browserMemoryMb: num,
    defaultMemoryMb: num,
    coldInitSecondsBrowser: num,
    coldInitSecondsOther: num,
    cold: z.union([z.literal('per-batch'), num]),
    itemsPerInvocation: num,
    durationBasis: z.enum(['measured', 'cpu']),
  })
  .strict();
const CostResult = z
  .object({
    scenario: Scenario,
    lines: z.array(z.object({ item: z.string(), quantity: num, unit: z.string(), cost: num }).strict()).min(1),
    total: num,
    perWrite: num,
    evidenceRetention: num,
    coldShareBrowser: num,
  })
  .strict();
const Lever = z
  .object({
    lever: z.string(),
    setting: z.string(),
    total: num,
    delta: num,
    deltaPercent: num,
    totalCpu: num,
    deltaCpu: num,
    deltaPercentCpu: num,
  })
  .strict();

export const BenchReportSchema = z
  .object({
    command: z.string(),
    date: z.string(),
    durationMs: num,
    options: z
      .object({ items: num, concurrency: z.array(num), repeat: num, tracing: z.enum(['on', 'off', 'both']), settleMs: num })
      .strict(),
    machine: z
      .object({
        cpuModel: z.string(),
        cores: num,
        memoryGiB: num,
        node: z.string(),
        platform: z.string(),
        loadAverage: z.object({ at: z.string(), one: num, five: num, fifteen: num }).strict(),
      })
      .strict(),
    /** Set when other processes took a noticeable share of the machine during some run. */
    machineWarning: z.string().optional(),
    loadAtEnd: z.object({ at: z.string(), one: num, five: num, fifteen: num }).strict(),
    runs: z.array(RunRecordSchema).min(2),
    latency: z
      .object({
        concurrency: z.literal(1),
        raw: SummarySchema,
        /** V1 with its own screenshots and trace: the baseline that keeps some evidence. */
        rawEvidence: SummarySchema,
        guarded: z.partialRecord(Tracing, SummarySchema),
        ratioMedianVsRawEvidence: z.partialRecord(Tracing, num),
        /** The headline: guarded over V1 as written (its screenshots and trace), median, p95 and CPU per item. */
        vsV1: z.partialRecord(Tracing, z.object({ median: num, p95: num, cpu: num }).strict()),
        ratioMedian: z.partialRecord(Tracing, num),
        ratioP95: z.partialRecord(Tracing, num),
        /** CPU per item (Node and Chromium), guarded over raw: the work ratio, independent of how long the CPU was waited for. */
        cpuRatio: z.partialRecord(Tracing, num),
      })
      .strict(),
    throughput: z
      .array(
        z
          .object({
            ...RunKey,
            itemsPerMin: num,
            speedupVsC1: num,
            coresBusy: num,
            /** Items per second of the benchmark's own CPU (Node and Chromium): throughput with the machine's load taken out. */
            itemsPerCoreSecond: num,
            otherCpuPercent: num,
          })
          .strict(),
      )
      .min(2),
    memory: z
      .object({
        peakByRun: z.array(
          z
            .object({
              ...RunKey,
              rssMiB: num,
              pssMiB: num,
              processes: num,
            })
            .strict(),
        ),
        perExtraConcurrentTaskRssMiB: z.record(z.string(), num),
        perExtraContextRssMiB: num,
        perExtraContextPssMiB: num,
        newBrowserRssMiB: num,
        newBrowserPssMiB: num,
        quotedBrowserMiB: num,
      })
      .strict(),
    browser: z
      .object({
        coldLaunch: z
          .object({ executablePathMs: num, launchMs: SummarySchema, firstPageMs: SummarySchema, totalMs: SummarySchema })
          .strict(),
        warmReuse: z.object({ newContextAndPageMs: SummarySchema }).strict(),
        pageOps: z
          .object({
            listPageLoadMs: SummarySchema,
            detailPageLoadMs: SummarySchema,
            fullPageScreenshotMs: SummarySchema,
            viewportScreenshotMs: SummarySchema,
            fullPageJpegScreenshotMs: SummarySchema,
          })
          .strict(),
        warmTaskSetup: z
          .object({
            firstOpenWithLoginMs: num,
            openTracedMs: SummarySchema,
            openUntracedMs: SummarySchema,
            vendorProbeMs: SummarySchema,
            closeTracedMs: SummarySchema,
            closeUntracedMs: SummarySchema,
          })
          .strict(),
        memory: z
          .object({
            browserOnly: Memory,
            browserWithOnePage: Memory.extend({ contexts: num.optional() }),
            withContexts: z.array(Memory.extend({ contexts: num })),
            perExtraContextRssMiB: num,
            perExtraContextPssMiB: num,
          })
          .strict(),
      })
      .strict(),
    vendorSplit: z
      .object({
        raw: Split,
        rawEvidence: Split,
        guarded: z.partialRecord(Tracing, Split.extend({ steps: z.array(StepRow).min(6) })),
        addedByPaperclipMs: z.partialRecord(Tracing, num),
        runVendorShare: z.array(
          z
            .object({
              ...RunKey,
              wallMs: num,
              vendorSumMs: num,
              vendorBusyMs: num,
              ownMs: num,
            })
            .strict(),
        ),
      })
      .strict(),
    claimConflict: z
      .object({
        conditionalPutConflictMs: SummarySchema,
        lostClaimRuns: z
          .object({
            executions: num,
            outcomes: z.record(z.string(), num),
            claimStepMs: SummarySchema,
            executionMs: SummarySchema,
            statesVisited: z.array(z.string()),
            browserStepsEntered: num,
            sessionsOpened: num,
            chromiumProcessesBefore: num,
            chromiumProcessesPeak: num,
            vendorPageRequests: num,
            vendorApiRequests: num,
            mutations: num,
            noBrowserLaunched: z.boolean(),
          })
          .strict(),
      })
      .strict(),
    summarizeScale: z
      .object({
        items: num,
        objectsPerItem: num,
        auditEventsPerItem: num,
        wallMs: num,
        cpuMs: num,
        emulatorCpuMs: num,
        wallMsPerItem: num,
        cpuMsPerItem: num,
        rssBeforeMiB: num,
        peakRssMiB: num,
        peakHeapUsedMiB: num,
        summaryItems: num,
        sealedItems: num,
      })
      .strict(),
    cost: z
      .object({
        pricesSource: z.string(),
        pricesRecordedOn: z.string(),
        sizing: z
          .object({
            source: z.string(),
            browserMemoryMb: num,
            defaultMemoryMb: num,
            browserEphemeralMb: num,
            browserArchitecture: z.string(),
            defaultArchitecture: z.string(),
            browserFunctions: z.array(z.string()),
            memoryMbOf: z.record(z.string(), num).optional(),
            evidenceRetentionDays: num,
            glacierAfterDays: num,
          })
          .strict(),
        work: z.partialRecord(Tracing, MeasuredWork),
        baseline: z.partialRecord(Tracing, CostResult),
        baselineCpu: z.partialRecord(Tracing, CostResult),
        sensitivity: z.array(z.object({ label: z.string(), total: num, totalCpu: num }).strict()),
        levers: z.array(Lever),
        approval: z.object({ emails: num, sesCost: num }).strict(),
        evidencePerItem: z.record(z.string(), z.object({ perItem: num, meanBytes: num }).strict()),
      })
      .strict(),
    targets: z
      .array(z.object({ target: z.string(), measured: z.string(), met: z.boolean().nullable(), note: z.string() }).strict())
      .min(10),
    findings: z.array(z.string()),
  })
  .strict();
export type BenchReport = z.infer<typeof BenchReportSchema>;
