import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DescribeExecutionCommand, ListExecutionsCommand, type ExecutionListItem } from '@aws-sdk/client-sfn';
import type { FaultKind } from '../backoffices/simulator/schemas.js';
import { startEmbeddedSession } from '../src/cli/data-folder.js';
import { resolveTakeover } from '../src/app/takeover/resolve.js';
import type { WiredServices as Services } from '../src/composition/services.js';
import { RUNNER_RESTARTED_ERROR } from '../twin/aws/stepfunctions/index.js';
import { idempotencyKey } from '../src/domain/task.js';
import { soakBackOffice, type SoakBackOfficeName } from './back-office.js';
import { pendingBills, planFaults, soakTenants, type PlannedFault } from './faults.js';
import { writeSoakConfig } from './config.js';
import type { RunnerSpec } from './runner-spec.js';
import { verifySoak, type SoakVerdict } from './verify.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The chaos soak: a seeded fault plan on a back office (the simulator or Ledgerly), concurrent batch runs
 * of the same tasks in a runner process that is SIGKILLed mid-batch and
 * restarted on the same data folder, optionally an operator pass that retries
 * every open takeover item, then a verdict from the journal and the records.
 * Everything listens on 127.0.0.1.
 */

export interface SoakOptions {
  /** The back office to run against (default: the simulator). */
  backOffice?: SoakBackOfficeName;
  items: number;
  runners: number;
  faultRate: number;
  /** Only these fault kinds, each in turn (default: drawn from every kind). */
  faultKinds?: FaultKind[];
  seed: number;
  /** Kill the runner process once this share of the items has a vendor mutation (0 = never kill). */
  killAfter: number;
  claimLeaseSeconds: number;
  readbackDeadlineMs: number;
  maxConcurrency: number;
  /** Global redesign for this many page renders right after the restart (0 = none). */
  redesignRenders: number;
  /** Run phase 2, the restart on the same data folder (default true; without a kill it only re-runs the settled batches). */
  restart?: boolean;
  /** Retry every open takeover item once as an operator, after the runners. */
  operatorRetry: boolean;
  /**
   * Lambda throttles: the probability that any invocation of any Lambda task state is refused with
   * Lambda.TooManyRequestsException, as a real account under its concurrency quota does (0 or omitted: none).
   */
  lambdaThrottles?: number;
  /** The back office's normal settle delay (the simulator's processing, Ledgerly's review). */
  settleMs: number;
  timeLimitMs: number;
  /** The config the soak's config is derived from (default: the back office's local config). */
  baseConfigPath?: string;
  /** Kept after the run when given; otherwise a temporary folder that is removed. */
  dataDir?: string;
  log: (line: string) => void;
}

export interface PhaseReport {
  label: string;
  killed: boolean;
  exitCode: number | null;
  durationMs: number;
  mutationsAtEnd: number;
  batches: number;
  batchErrors: string[];
  recovered?: Array<{ key: string; billNo: string; from: string; status: string; outcome: string | null }>;
  /** The injected Lambda faults that fired in this phase, as `<state> <error>`: count. */
  lambdaFaultsFired: Record<string, number>;
  error?: string;
}

export interface SoakReport {
  options: Omit<SoakOptions, 'log' | 'dataDir' | 'baseConfigPath' | 'backOffice' | 'faultKinds'> & {
    backOffice: SoakBackOfficeName;
    faultKinds: FaultKind[] | null;
  };
  durationMs: number;
  tenants: Array<{ id: string; pending: number }>;
  faults: { planned: Record<string, number>; fired: Record<string, number> };
  /** Lambda throttles injected on every Lambda task state, and what fired over all phases. */
  lambdaFaults: { throttleProbability: number; fired: Record<string, number> };
  phases: PhaseReport[];
  operator: { retried: number; outcomes: Record<string, number> } | null;
  executions: { byStatus: Record<string, number>; failed: Array<{ name: string; error: string }> };
  unsettledBills: string[];
  verdict: SoakVerdict;
  ok: boolean;
}

const countBy = <T>(items: readonly T[], key: (t: T) => string) => {
  const counts: Record<string, number> = {};
  for (const t of items) counts[key(t)] = (counts[key(t)] ?? 0) + 1;
  return counts;
};

function sumCounts(all: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts)) sum[k] = (sum[k] ?? 0) + n;
  return sum;
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs one runner process; SIGKILLs its whole process group (node and Chromium) when `killWhen` says so. */
async function runPhase(
  spec: RunnerSpec,
  specPath: string,
  options: { killWhen?: () => Promise<boolean>; deadline: number; log: (line: string) => void; mutations: () => Promise<number> },
): Promise<PhaseReport> {
  writeFileSync(specPath, JSON.stringify(spec));
  const began = Date.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', resolve('chaos/runner.ts'), '--spec', specPath], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  const pid = child.pid!;
  const report: PhaseReport = {
    label: spec.label,
    killed: false,
    exitCode: null,
    durationMs: 0,
    mutationsAtEnd: 0,
    batches: 0,
    batchErrors: [],
    lambdaFaultsFired: {},
  };
  const stderrTail: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 40) stderrTail.shift();
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let event: Record<string, any>;
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (event['event'] === 'batch') {
      report.batches += 1;
      if (event['lambdaFaultsFired']) report.lambdaFaultsFired = event['lambdaFaultsFired'];
      const counts = event['summary']?.counts ?? {};
      const nonZero = Object.entries(counts)
        .filter(([, n]) => (n as number) > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      options.log(
        `  [${spec.label}] runner ${event['runner']} ${event['tenant']}: ${event['status'].toLowerCase()}${nonZero ? ` (${nonZero})` : ''}${event['error'] || event['summary']?.error ? ` error: ${String(event['error'] ?? event['summary']?.error).slice(0, 160)}` : ''}`,
      );
      if (event['status'] !== 'SUCCEEDED' || event['summary']?.error)
        report.batchErrors.push(`${event['tenant']}: ${event['error'] ?? event['summary']?.error}`);
    } else if (event['event'] === 'recovered') {
      report.recovered = event['results'];
      options.log(
        `  [${spec.label}] resumed ${event['results'].length} orphaned claim(s): ${JSON.stringify(countBy(event['results'], (r: { outcome: string | null; status: string }) => r.outcome ?? r.status))}`,
      );
    } else if (event['event'] === 'log') {
      options.log(`  [${spec.label}]${event['line']}`);
    } else if (event['event'] === 'error') {
      report.error = String(event['message']).split('\n')[0];
    }
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  try {
    let lastProgress = 0;
    while (exitCode === undefined) {
      if (Date.now() > options.deadline) {
        process.kill(-pid, 'SIGKILL');
        report.error = 'the soak ran out of time';
        break;
      }
      if (options.killWhen && (await options.killWhen())) {
        process.kill(-pid, 'SIGKILL');
        report.killed = true;
        options.log(`  [${spec.label}] SIGKILL to the runner process group ${pid} after ${await options.mutations()} vendor mutations`);
        break;
      }
      if (Date.now() - lastProgress > 15_000) {
        lastProgress = Date.now();
        options.log(`  [${spec.label}] … ${await options.mutations()} vendor mutations so far`);
      }
      await Promise.race([exited, sleep(300)]);
    }
    report.exitCode = await exited;
  } finally {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    // Chromium and the node process must be gone before the folder is reopened.
    for (let i = 0; i < 100 && groupAlive(pid); i++) await sleep(100);
  }
  report.durationMs = Date.now() - began;
  report.mutationsAtEnd = await options.mutations();
  if (report.exitCode !== 0 && !report.killed && !report.error)
    report.error = `runner exited with ${report.exitCode}: ${stderrTail.slice(-5).join(' | ')}`;
  return report;
}

async function allExecutions(s: Services): Promise<ExecutionListItem[]> {
  const items: ExecutionListItem[] = [];
  let nextToken: string | undefined;
  do {
    const page = await s.clients.sfn.send(new ListExecutionsCommand({ stateMachineArn: s.guardedWriteArn(), maxResults: 1000, nextToken }));
    items.push(...(page.executions ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return items;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const began = Date.now();
  const deadline = began + options.timeLimitMs;
  const log = options.log;
  const backOffice = soakBackOffice(options.backOffice ?? 'simulator');
  const tenants = soakTenants(options.items, backOffice.maxTenants);
  const bills = pendingBills(tenants, backOffice);
  const plan: PlannedFault[] = planFaults(bills, options.faultRate, options.seed, options.readbackDeadlineMs, options.faultKinds);
  const tasks = tenants.map((t) => ({ taskId: `T-soak-${options.seed}-${t.id}`, tenant: t.id }));
  const taskOf = new Map(tasks.map((t) => [t.tenant, t.taskId]));
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'paperclip-soak-')));
  mkdirSync(dataDir, { recursive: true });
  const token = randomBytes(12).toString('hex');
  const vendor = await backOffice.start({ controlToken: token, seed: options.seed, settleMs: options.settleMs });
  try {
    await vendor.seed(tenants);
    await vendor.setFaults(plan.map((f) => f.spec));
    const configPath = writeSoakConfig(
      options.baseConfigPath ?? backOffice.defaultConfig,
      backOffice,
      tenants,
      {
        claimLeaseSeconds: options.claimLeaseSeconds,
        readbackDeadlineMs: options.readbackDeadlineMs,
        maxConcurrency: options.maxConcurrency,
      },
      join(dataDir, 'soak-config.yaml'),
    );
    log(
      `soak: ${options.items} items over ${tenants.length} tenant(s), ${options.runners} concurrent runner(s), ${plan.length} bill fault(s) (seed ${options.seed})`,
    );
    log(`  ${backOffice.name} ${vendor.url}, data folder ${dataDir}`);
    log(`  faults: ${JSON.stringify(countBy(plan, (f) => f.spec.kind))}`);
    if (options.lambdaThrottles)
      log(`  Lambda throttles on every Lambda task state, probability ${options.lambdaThrottles} per invocation`);
    const mutations = async () => (await vendor.mutations()).length;
    // Items with a vendor mutation, not journal entries: one write of an item may be more than one entry.
    const itemsWritten = async () => new Set((await vendor.mutations()).map((m) => m.billNo)).size;
    const killAt = Math.max(1, Math.round(options.items * options.killAfter));
    const spec = (label: string, recoverFirst: boolean): RunnerSpec => ({
      dataDir,
      configPath,
      vendorUrl: vendor.url,
      tasks,
      runners: options.runners,
      recoverFirst,
      label,
      readAttempts: 3,
      lambdaFaults: options.lambdaThrottles
        ? [{ state: '*', error: 'Lambda.TooManyRequestsException', probability: options.lambdaThrottles }]
        : [],
      lambdaFaultSeed: options.seed,
    });

    const phases: PhaseReport[] = [];
    log(`phase 1: ${options.runners} runner(s)${options.killAfter > 0 ? `, SIGKILL once ${killAt} item(s) have a vendor mutation` : ''}`);
    phases.push(
      await runPhase(spec('first', false), join(dataDir, 'runner-first.json'), {
        deadline,
        log,
        mutations,
        ...(options.killAfter > 0 ? { killWhen: async () => (await itemsWritten()) >= killAt } : {}),
      }),
    );
    if (options.restart ?? true) {
      if (options.redesignRenders > 0) {
        await vendor.addFault({ kind: 'redesign', times: options.redesignRenders });
        log(`  global redesign installed for the next ${options.redesignRenders} page render(s)`);
      }
      log('phase 2: restart on the same data folder: resume orphaned claims (readback first), then the same batches again');
      phases.push(await runPhase(spec('restart', true), join(dataDir, 'runner-restart.json'), { deadline, log, mutations }));
    }

    const session = await startEmbeddedSession({ dataDir, configPath, vendorBaseUrl: vendor.url });
    try {
      const s = session.services;
      const store = s.takeovers;
      let operator: SoakReport['operator'] = null;
      if (options.operatorRetry) {
        const open = (await store.list('OPEN')).filter((e) => tasks.some((t) => t.taskId === e.taskId));
        log(`operator pass: retrying ${open.length} open takeover item(s) through the guarded path`);
        const outcomes: string[] = [];
        const queue = [...open];
        await Promise.all(
          Array.from({ length: options.maxConcurrency }, async () => {
            for (let e = queue.shift(); e; e = queue.shift()) {
              if (Date.now() > deadline) break;
              const result = await resolveTakeover(
                s,
                { key: e.key, as: 'retry', note: 'soak operator pass: retry every open item once', operator: 'soak-operator@ops.example' },
                { wait: true },
              ).catch((error: Error) => ({ retry: { outcome: `refused: ${error.message.slice(0, 80)}` } }));
              outcomes.push(result.retry?.outcome ?? 'not started');
            }
          }),
        );
        operator = { retried: open.length, outcomes: countBy(outcomes, (o) => o) };
        log(`  operator retries: ${JSON.stringify(operator.outcomes)}`);
      }

      // Let the vendor settle (async_delay faults) before comparing its state with the records.
      let unsettled: string[] = [];
      for (let i = 0; i < 240; i++) {
        unsettled = await vendor.settling();
        if (unsettled.length === 0) break;
        await sleep(250);
      }
      const finalStatus = await vendor.statuses();
      const journal = await vendor.mutations();
      const claims = (await Promise.all(tasks.map((t) => s.claims.byTask(t.taskId)))).flat();
      const queue = [...(await store.list('OPEN')), ...(await store.list('RESOLVED'))];
      const auditTypes = new Map<string, string[]>();
      for (const claim of claims)
        auditTypes.set(
          claim.key,
          (await s.audit.events(claim.key)).map((e) => e.type),
        );
      // Items never claimed: their trail says whether routing failed (and was reported) or nothing happened at all.
      const claimed = new Set(claims.map((c) => c.key));
      const routingFailed = new Set<string>();
      for (const b of bills) {
        const key = idempotencyKey({ taskId: taskOf.get(b.tenant)!, tenant: b.tenant, billNo: b.billNo, action: backOffice.itemAction });
        if (!claimed.has(key) && (await s.audit.events(key)).some((e) => e.type === 'routing_failed')) routingFailed.add(key);
      }
      const targetStatus = Object.fromEntries(Object.entries(s.pack.actions).map(([name, action]) => [name, action.targetStatus]));
      const verdict = verifySoak({
        items: bills.map((b) => ({ ...b, taskId: taskOf.get(b.tenant)! })),
        action: backOffice.itemAction,
        targetStatus,
        identityOf: backOffice.journalIdentity,
        journal,
        finalStatus,
        claims,
        queue,
        auditTypes,
        routingFailed,
      });
      const executions = await allExecutions(s);
      const failed: SoakReport['executions']['failed'] = [];
      for (const e of executions.filter((x) => x.status === 'FAILED')) {
        const described = await s.clients.sfn.send(new DescribeExecutionCommand({ executionArn: e.executionArn }));
        if (described.error !== RUNNER_RESTARTED_ERROR)
          failed.push({ name: e.name ?? '', error: `${described.error}: ${(described.cause ?? '').slice(0, 200)}` });
      }
      const firedFaults = await vendor.firedFaults();
      const report: SoakReport = {
        options: {
          backOffice: backOffice.name,
          items: options.items,
          runners: options.runners,
          faultRate: options.faultRate,
          faultKinds: options.faultKinds ?? null,
          seed: options.seed,
          killAfter: options.killAfter,
          claimLeaseSeconds: options.claimLeaseSeconds,
          readbackDeadlineMs: options.readbackDeadlineMs,
          maxConcurrency: options.maxConcurrency,
          redesignRenders: options.redesignRenders,
          restart: options.restart ?? true,
          operatorRetry: options.operatorRetry,
          settleMs: options.settleMs,
          timeLimitMs: options.timeLimitMs,
          lambdaThrottles: options.lambdaThrottles ?? 0,
        },
        durationMs: Date.now() - began,
        tenants,
        faults: { planned: countBy(plan, (f) => f.spec.kind), fired: countBy(firedFaults, (kind) => kind) },
        lambdaFaults: { throttleProbability: options.lambdaThrottles ?? 0, fired: sumCounts(phases.map((p) => p.lambdaFaultsFired)) },
        phases,
        operator,
        executions: { byStatus: countBy(executions, (e) => e.status ?? 'UNKNOWN'), failed },
        unsettledBills: unsettled,
        verdict,
        ok: verdict.ok && phases.every((p) => !p.error),
      };
      return report;
    } finally {
      await session.close();
    }
  } finally {
    await vendor.close();
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
