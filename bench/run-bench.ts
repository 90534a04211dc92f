import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { loadRuntime } from '../src/config/runtime.js';
import { closeSharedBrowser } from '../src/browser/chromium.js';
import { startEmbeddedPaperclip, type EmbeddedPaperclip } from '../twin/runtime/embedded-paperclip.js';
import { billNoFor, startSimulator, type ResetSpec } from '../backoffices/simulator/server.js';
import { SimulatorControl } from '../backoffices/simulator/control-client.js';
import { AwsUsage } from './aws-usage.js';
import { measureBrowserSetup } from './browser-setup.js';
import { RunSampler, type CpuTimeline } from './cpu-timeline.js';
import { startForkedEmulators } from './forked-emulators.js';
import { measureClaimConflict } from './claim-conflict.js';
import { measureSummarizeScale } from './summarize-scale.js';
import { runGuardedBatch, type GuardedRun } from './guarded-run.js';
import { describeMachine, loadNow } from './machine.js';
import { runRawScript, type RawRun } from './raw-script.js';
import { analyse, type AnalysisInput } from './analysis.js';
import type { BenchReport, RunRecord } from './report-schema.js';
import { busyMs, sumMs, toRequests } from './vendor-wait.js';
import { summarize } from './stats.js';

/**
 * The whole benchmark: browser setup costs, then per concurrency level the raw
 * V1-style script and the guarded path on identical seeded bills (the
 * simulator is reset before every run), then the claim-conflict proof, then
 * the analysis and the cost model.
 */

export interface BenchOptions {
  items: number;
  concurrency: number[];
  repeat: number;
  tracing: 'on' | 'off' | 'both';
  settleMs: number;
  /** Settled items the Summarize-at-scale measurement summarises (summarize-scale.ts). Default 2,000. */
  summarizeItems?: number;
  command: string;
  configPath?: string;
  /** Fewer samples for the in-suite version (no extra browser launches). */
  quick?: boolean;
  log?: (line: string) => void;
}

export const TENANT = 'acme';
const CONTROL_TOKEN = 'bench-control-token';

/** The same bills for every run: N pending mismatches, two already processed (skipped by both paths). */
export function seedSpec(items: number, settleMs: number): ResetSpec {
  return { seed: 7, tenants: [{ id: TENANT, pending: items, overcharge: 0, processed: 2 }], asyncDelayMs: settleMs };
}

/**
 * The local config with limits.max_concurrency overridden (the batch's Map
 * concurrency) and evidence.write_trace set by the tracing mode being measured.
 */
function benchConfig(sourcePath: string, concurrency: number, tracing: 'on' | 'off', dir: string): string {
  const raw = parseYaml(readFileSync(sourcePath, 'utf8')) as Record<string, any>;
  raw['limits'] = {
    ...(raw['limits'] ?? {}),
    max_concurrency: concurrency,
    max_batch_items: Math.max(500, raw['limits']?.max_batch_items ?? 0),
  };
  // One vendor session per item at once plus the list read: the bench measures the batch, not the per-identity cap.
  raw['vendor_sessions'] = { ...(raw['vendor_sessions'] ?? {}), max_per_identity: Math.min(40, concurrency + 1) };
  raw['vendor'] = { ...raw['vendor'], site_pack: resolve(String(raw['vendor']?.site_pack ?? 'sitepacks/vendor-sim.yaml')) };
  raw['evidence'] = { ...(raw['evidence'] ?? {}), write_trace: tracing === 'on' };
  const path = join(dir, `paperclip.bench.c${concurrency}.tracing-${tracing}.yaml`);
  writeFileSync(path, stringifyYaml(raw));
  return path;
}

async function journalCheck(control: SimulatorControl, items: number) {
  const marks = (await control.journal()).filter((e) => e.action === 'mark');
  const perBill = new Map<string, number>();
  for (const m of marks) perBill.set(m.billNo, (perBill.get(m.billNo) ?? 0) + 1);
  return {
    mutations: marks.length,
    distinctBills: perBill.size,
    exactlyOnePerItem: perBill.size === items && [...perBill.values()].every((n) => n === 1),
  };
}

function cpuOf(cpu: CpuTimeline, start: number, end: number, emulators: boolean): RunRecord['cpu'] {
  const c = cpu.between(start, end);
  return {
    nodeMs: Math.round(c.nodeMs),
    chromiumMs: Math.round(c.chromiumMs),
    // Only where the run had forked emulators: the scripts use no AWS service.
    ...(emulators ? { emulatorsMs: Math.round(c.emulatorsMs) } : {}),
  };
}

/** What was measured around one run, the same for the raw script and the guarded path. */
interface RunMeasures {
  concurrency: number;
  repeat: number;
  otherCpuMs: number;
  requests: ReturnType<typeof toRequests>;
  peak: RunRecord['peakBrowser'];
  journal: RunRecord['journal'];
  cpu: CpuTimeline;
}

/**
 * One run's record. `window` is when the run went (its vendor requests and CPU are counted inside it), `emulators`
 * whether it had forked emulators whose CPU is reported apart.
 */
function runRecord(
  measures: RunMeasures,
  run: Pick<RunRecord, 'path' | 'tracing' | 'status' | 'outcomes' | 'wallMs'> & { itemLatenciesMs: number[] },
  window: { start: number; end: number },
  emulators: boolean,
): RunRecord {
  const { requests } = measures;
  const inRun = requests.filter((r) => r.start >= window.start && r.start <= window.end);
  const items = run.itemLatenciesMs.length;
  return {
    path: run.path,
    concurrency: measures.concurrency,
    tracing: run.tracing,
    repeat: measures.repeat,
    otherCpuMs: measures.otherCpuMs,
    items,
    status: run.status,
    wallMs: run.wallMs,
    throughputPerMin: items / (run.wallMs / 60_000),
    itemLatencyMs: summarize(run.itemLatenciesMs),
    outcomes: run.outcomes,
    journal: measures.journal,
    vendor: { requests: inRun.length, sumMs: sumMs(inRun), busyMs: busyMs(inRun, window) },
    cpu: cpuOf(measures.cpu, window.start, window.end, emulators),
    peakBrowser: measures.peak,
  };
}

function rawRecord(run: RawRun, variant: 'raw' | 'raw-evidence', measures: RunMeasures): RunRecord {
  const outcomes: Record<string, number> = {};
  for (const item of run.items) outcomes[item.outcome] = (outcomes[item.outcome] ?? 0) + 1;
  const status = run.items.length === measures.journal.mutations ? 'SUCCEEDED' : 'INCOMPLETE';
  const itemLatenciesMs = run.items.map((i) => i.latencyMs);
  return runRecord(
    measures,
    { path: variant, tracing: null, status, outcomes, wallMs: run.wallMs, itemLatenciesMs },
    { start: run.startedAt, end: run.endedAt },
    false,
  );
}

function guardedRecord(run: GuardedRun, tracing: 'on' | 'off', measures: RunMeasures): RunRecord {
  const outcomes: Record<string, number> = {};
  for (const [k, v] of Object.entries(run.summary?.counts ?? {})) if (v) outcomes[k] = v;
  const itemLatenciesMs = run.items.map((i) => i.durationMs);
  return runRecord(
    measures,
    { path: 'guarded', tracing, status: run.status, outcomes, wallMs: run.wallMs, itemLatenciesMs },
    { start: run.startedAt, end: run.stoppedAt },
    true,
  );
}

export async function runBenchmark(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const machine = describeMachine();
  const configPath = resolve(options.configPath ?? 'config/paperclip.local.yaml');
  const modes: Array<'on' | 'off'> = options.tracing === 'both' ? ['on', 'off'] : [options.tracing];
  const spec = seedSpec(options.items, options.settleMs);
  const sim = await startSimulator({ controlToken: CONTROL_TOKEN, asyncDelayMs: options.settleMs });
  const control = new SimulatorControl(sim.url, CONTROL_TOKEN);
  const workDir = mkdtempSync(join(tmpdir(), 'paperclip-bench-'));
  const records: RunRecord[] = [];
  const rawRuns: AnalysisInput['rawRuns'] = [];
  const guardedRuns: AnalysisInput['guardedRuns'] = [];
  let claimConflict: BenchReport['claimConflict'] | undefined;
  let prefix = 'paperclip-local';
  let approvers = 0;
  try {
    await control.reset(spec);
    const { config } = loadRuntime(configPath, { vendorBaseUrl: sim.url });
    prefix = config.prefix;
    const tenant = config.tenants.find((t) => t.id === TENANT);
    const identity = config.identities.find((i) => i.id === tenant?.identity);
    if (!tenant || !identity || identity.credentials.source !== 'inline') {
      throw new Error(`${configPath} must configure tenant ${TENANT} with an identity that has inline credentials (the local simulator's)`);
    }
    approvers = tenant.approvers.length;
    const secret = {
      username: identity.credentials.username,
      password: identity.credentials.password,
      ...(identity.credentials.api_token ? { apiToken: identity.credentials.api_token } : {}),
    };

    log('browser: cold launch, warm reuse, warm per-task setup, memory per context');
    const { sitePack } = loadRuntime(configPath, { vendorBaseUrl: sim.url });
    const browser = await measureBrowserSetup({
      coldSamples: options.quick ? 1 : Math.max(3, options.repeat),
      reuseSamples: options.quick ? 3 : 10,
      setupSamples: options.quick ? 3 : 10,
      contexts: options.quick ? 2 : 4,
      baseUrl: sim.url,
      pack: sitePack,
      identityId: identity.id,
      secret,
      tenant: TENANT,
      sampleBill: billNoFor(TENANT, 1),
      timings: () => control.timings(),
      log,
    });

    const levels = options.concurrency;
    for (const [levelIndex, concurrency] of levels.entries()) {
      // V1 with its own evidence (screenshots, trace) only at concurrency 1: it is the per-item reference, not a scaling run.
      const variants: Array<'raw' | 'raw-evidence'> = concurrency === 1 ? ['raw', 'raw-evidence'] : ['raw'];
      for (const variant of variants) {
        for (let r = 1; r <= options.repeat; r++) {
          await control.reset(spec);
          const evidenceDir = variant === 'raw-evidence' ? mkdtempSync(join(workDir, 'raw-evidence-')) : undefined;
          const sampler = await RunSampler.start();
          const run = await runRawScript({
            baseUrl: sim.url,
            tenant: TENANT,
            username: secret.username,
            password: secret.password,
            concurrency,
            ...(evidenceDir ? { evidenceDir } : {}),
          });
          const { cpu, peak, otherCpuMs } = await sampler.stop();
          const requests = toRequests(await control.timings());
          const journal = await journalCheck(control, options.items);
          records.push(
            rawRecord(run, variant, { concurrency, repeat: r, otherCpuMs: Math.round(otherCpuMs), requests, peak, journal, cpu }),
          );
          rawRuns.push({ concurrency, variant, run, requests, cpu });
          log(`${variant} c=${concurrency} r=${r}: ${run.items.length} items in ${run.wallMs} ms, ${journal.mutations} mutations`);
        }
      }

      // One stack per tracing mode: the mode is the stack's config (evidence.write_trace), as it would be for an operator.
      for (const [modeIndex, mode] of modes.entries()) {
        const stackConfig = benchConfig(configPath, concurrency, mode, workDir);
        const dataDir = mkdtempSync(join(workDir, `stack-c${concurrency}-tracing-${mode}-`));
        // DynamoDB, S3 and SES in a process of their own (their CPU is not Lambda's, so not Paperclip's);
        // Step Functions stays here, since its runner calls the handlers in this process.
        const { config: stackRuntime } = loadRuntime(stackConfig, { vendorBaseUrl: sim.url });
        const emulators = await startForkedEmulators({ dataDir, prefix: stackRuntime.prefix, bucket: stackRuntime.evidence.bucket });
        const paperclip: EmbeddedPaperclip = await startEmbeddedPaperclip({
          vendorBaseUrl: sim.url,
          dataDir,
          configPath: stackConfig,
          external: emulators.endpoints,
        }).catch(async (error: unknown) => {
          await emulators.stop();
          throw error;
        });
        const usage = new AwsUsage(paperclip.services.clients);
        try {
          let lastTasks: Array<{ taskId: string; tenant: string; billNo: string; action: string }> = [];
          for (let r = 1; r <= options.repeat; r++) {
            await control.reset(spec);
            const taskId = `T-bench-c${concurrency}-${mode}-r${r}-${Date.now().toString(36)}`;
            const sampler = await RunSampler.start({ emulatorsPid: emulators.pid });
            const run = await runGuardedBatch(paperclip, usage, { taskId, tenant: TENANT, prefix });
            const { cpu, peak, otherCpuMs } = await sampler.stop();
            const requests = toRequests(await control.timings());
            const journal = await journalCheck(control, options.items);
            const record = guardedRecord(run, mode, {
              concurrency,
              repeat: r,
              otherCpuMs: Math.round(otherCpuMs),
              requests,
              peak,
              journal,
              cpu,
            });
            records.push(record);
            guardedRuns.push({ concurrency, tracing: mode, run, requests, cpu });
            log(
              `guarded c=${concurrency} tracing=${mode} r=${r}: ${run.status} ${run.items.length} items in ${run.wallMs} ms, ${journal.mutations} mutations; ` +
                `CPU ms Node ${record.cpu.nodeMs}, Chromium ${record.cpu.chromiumMs}, forked emulators ${record.cpu.emulatorsMs}`,
            );
            lastTasks = run.items.map((i) => ({
              taskId,
              tenant: TENANT,
              billNo: String((i.output as { billNo?: string })?.billNo ?? ''),
              action: 'mark_processed',
            }));
          }
          if (levelIndex === levels.length - 1 && modeIndex === modes.length - 1) {
            log('claim conflict: conditional put on an existing key, and second-runner executions with no browser running');
            claimConflict = await measureClaimConflict({
              paperclip,
              control,
              tasks: lastTasks.filter((t) => t.billNo).slice(0, options.quick ? 3 : Math.min(12, lastTasks.length)),
              samples: options.quick ? 10 : 50,
              prefix,
            });
          }
        } finally {
          usage.detach();
          try {
            await paperclip.stop();
          } finally {
            await emulators.stop();
          }
        }
      }
    }
    if (!claimConflict) throw new Error('the claim conflict measurement did not run');
    const summarizeItems = options.summarizeItems ?? 2000;
    log(`summarize at scale: ${summarizeItems} settled items, Summarize alone in this process, the emulators forked`);
    const summarizeScale = await measureSummarizeScale({ items: summarizeItems, configPath, log });
    return analyse({
      command: options.command,
      date: new Date(started).toISOString(),
      options: { items: options.items, concurrency: levels, repeat: options.repeat, tracing: options.tracing, settleMs: options.settleMs },
      machine,
      loadAtEnd: loadNow(),
      durationMs: Date.now() - started,
      browser,
      records,
      rawRuns,
      guardedRuns,
      claimConflict,
      summarizeScale,
      prefix,
      approvers,
    });
  } finally {
    await closeSharedBrowser();
    await sim.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}
