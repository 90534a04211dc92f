import { z } from 'zod';
import type { Services } from '../app/services.js';
import { withSession } from '../app/sessions.js';
import { compensate, CompensationRefusedError, runGuardedWrite, type CompensationResult } from '../app/compensation.js';
import { observeStatus, readContextFor, readList } from '../browser/vendor-reads.js';
import { browserlessApi } from '../app/ownership.js';
import type { OpenedSession } from '../browser/identity-sessions.js';
import { idempotencyKey, type WriteTask } from '../domain/task.js';
import type { ReadbackSource } from '../sitepack/schema.js';
import { resolve } from 'node:path';
import { ConfigPath, DataDir, KeyValueList, parseCommand, Port, TenantId, UsageError, type Command, type CommandSpec } from './args.js';
import { loadRuntime } from '../config/runtime.js';
import { DataFolderError, startEmbeddedSession } from './data-folder.js';
import { startLocalEnvironment } from './demo.js';
import { deadline } from '../lib/deadline.js';
import { own } from '../lib/own.js';
import { InputRejectedError, NamedError } from '../domain/errors.js';
import { routeTask, type RoutedItem } from '../domain/routing.js';
import { doneLine } from '../domain/stage-proof.js';
import { eventsOfType } from '../domain/audit-events.js';
import type { AuditEvent } from '../domain/audit-chain.js';
import { stagesOf } from '../sitepack/schema.js';
import { describeStep, runStep, type StepContext } from '../browser/executor.js';
import { settled } from '../browser/settled.js';
import { readParams } from '../browser/vendor-reads.js';
import { evidenceKey } from '../app/ports/evidence.js';

/**
 * The drill proves a pack's write action on one sandbox item before any batch. A reversible action is executed
 * through the guarded path and undone: each stage's `done` check must read false before its click and true after it
 * (the write itself stops when it does not, src/domain/stage-proof.ts), every readback source must read the target
 * state after the write and the state before it after the inverse. An irreversible action is walked up to its commit
 * click, which is found and not clicked: fills, extracts and `expect`s run, the page is pictured with its dialog, and
 * the drill reports what the approver would see. Passing means the way forward and the way back work today.
 */

export class DrillError extends NamedError {
  override readonly name = 'DrillError';
}

/** One readback source's reading of the item: before the write, after it, after the inverse. */
export interface SourceReading {
  source: ReadbackSource;
  before: string | null;
  afterWrite: string | null;
  after: string | null;
  /** Why the source could not read the item, when it could not. */
  error?: string;
}

/** A stage's done check as the guarded write read it (stage_done_checked in the audit chain); null: not read. */
export interface StageProof {
  stage: string;
  line: string;
  hasDone: boolean;
  doneBefore: boolean | null;
  doneAfter: boolean | null;
}

/** What an irreversible action's steps showed up to its commit click, which the drill found and did not click. */
export interface WalkResult {
  /** Each step that ran, as an engineer reads it; the last entry is the commit click that was found and not clicked. */
  steps: string[];
  /** Values the steps extracted (the amount a typed confirmation shows): the vendor's own figures. */
  extracted: Record<string, string>;
  /** The picture of the page just before the commit click (its dialog open), in the evidence bucket. */
  screenshot: string | null;
  /** Stages after the first commit need it to have landed: they are not walked. */
  notWalked: string[];
  /** What the approval mail and page would show. */
  approverSees: { tenant: string; billNo: string; action: string; description: string; amount: string | null; requestedBy: string };
  /**
   * Whether the action's `settled` condition already held with nothing clicked (its steps run after the walk, on the
   * item as it still is): such a condition ends the after-picture's wait at once, before the write shows.
   */
  settledBeforeCommit?: boolean;
}

export interface DrillResult {
  drill: 'passed' | 'failed';
  /** A reversible action is executed and undone; an irreversible one is walked up to its commit click. */
  mode: 'execute_and_undo' | 'walk_to_commit';
  tenant: string;
  billNo: string;
  action: string;
  inverseAction: string | null;
  taskId: string;
  key: string;
  /** The source the drill read the vendor state from, independent of the guarded path's readback. */
  readSource: ReadbackSource;
  before: string | null;
  afterWrite: string | null;
  after: string | null;
  /** Every readback source the config names (and the independent one), each read before, after the write and after the inverse. */
  sources: SourceReading[];
  /** Each stage's done check: false before its click and true after it, or the drill fails naming the line. */
  stages: StageProof[];
  writeOutcome: string;
  compensation: Pick<CompensationResult, 'inverseKey' | 'outcome' | 'rolledBack'> | { refused: string } | null;
  restored: boolean;
  walk?: WalkResult;
  reason?: string;
  durationMs: number;
}

export interface DrillOptions {
  tenant: string;
  billNo?: string;
  action?: string;
  taskId?: string;
  requestedBy?: string;
  /** The action's parameters (the tenant's action_params fill the rest, as in a batch). */
  params?: Record<string, string>;
}

/** The longest the drill looks for an action's settled state before its commit click: it should not be there at all. */
const SETTLED_PROBE_MS = 2000;

/** The API when the site has one (another channel entirely), else the settlement file, else the detail page. */
function independentSource(s: Services): ReadbackSource {
  if (s.pack.api) return 'api';
  if (s.pack.export) return 'export';
  return 'detail';
}

/** Raised by the walk's commit callback: the commit click's target was found; it is not clicked. */
/** Thrown at the commit click of an irreversible drill: the walk stops there, nothing is clicked. */
class StopBeforeCommit extends NamedError {
  override readonly name = 'StopBeforeCommit';
  constructor() {
    super('the drill stops before the commit click');
  }
}

export async function runDrill(s: Services, options: DrillOptions): Promise<DrillResult> {
  const began = Date.now();
  const tenant = s.config.tenants.find((t) => t.id === options.tenant);
  if (!tenant)
    throw new DrillError(
      `tenant "${options.tenant}" is not configured; configured tenants: ${s.config.tenants.map((t) => t.id).join(', ')}`,
    );
  const action = options.action ?? 'mark_processed';
  const siteAction = own(s.pack.actions, action);
  if (!siteAction || !own(s.config.actions, action)) throw new DrillError(`action "${action}" is not enabled for ${s.pack.site}`);
  const reversible = siteAction.reversibility === 'reversible' && siteAction.inverse !== undefined;
  const identity = tenant.identity;
  const source = independentSource(s);
  const sourceNames = [...new Set<ReadbackSource>([source, ...s.config.write_policy.readback_sources])];
  const readFrom = async (from: ReadbackSource, billNo: string): Promise<{ status?: string | null; error?: string }> => {
    try {
      // A token API is read without a browser; a cookie API (like every page source) needs the identity's session.
      const api = from === 'api' ? await browserlessApi(s, identity) : undefined;
      const observe = (session?: OpenedSession) =>
        observeStatus(from, {
          pack: s.pack,
          baseUrl: s.config.vendor.base_url,
          tenant: tenant.id,
          billNo,
          api,
          ...(session ? { session } : {}),
        });
      const observation = api
        ? await observe()
        : await withSession(s, identity, 'read', { trace: false, tenant: tenant.id }, (session) => observe(session));
      if (observation.status === undefined) return { error: observation.error ?? 'not listed' };
      return { status: observation.status };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  const read = async (billNo: string): Promise<string | null> => {
    const observed = await readFrom(source, billNo);
    if (observed.status === undefined) throw new DrillError(`could not read ${billNo} from ${source}: ${observed.error}`);
    return observed.status;
  };
  const settling = [
    ...siteAction.settlingStatuses,
    ...((siteAction.inverse && s.pack.actions[siteAction.inverse]?.settlingStatuses) ?? []),
  ];
  // A late settle can still be moving when a readback confirmed; wait it out before a reading the drill reports.
  const settledFrom = async (from: ReadbackSource, billNo: string) => {
    const limit = deadline(s.config.write_policy.readback_deadline_ms);
    let observed = await readFrom(from, billNo);
    while (observed.status != null && settling.includes(observed.status) && !limit.expired) {
      await limit.sleep(s.config.write_policy.readback_poll_ms);
      observed = await readFrom(from, billNo);
    }
    return observed;
  };

  const billNo =
    options.billNo ??
    (await withSession(s, identity, 'read', { trace: false, tenant: tenant.id }, async (session) => {
      const rows = await readList(session, readContextFor(s, tenant.id));
      return rows.find(
        (r) => siteAction.appliesTo.includes(r.status) && r.kind !== undefined && own(tenant.actions_by_kind, r.kind) === action,
      )?.billNo;
    }));
  if (!billNo)
    throw new DrillError(`tenant ${tenant.id} has no bill that ${action} applies to (${siteAction.appliesTo.join(', ')}); pass --bill`);

  const taskId = options.taskId ?? `T-drill-${Date.now().toString(36)}`;
  const requestedBy = options.requestedBy ?? 'drill';
  const task: WriteTask = { taskId, tenant: tenant.id, billNo, action, params: options.params ?? {}, requestedBy };
  const key = idempotencyKey(task);
  // Routed as a batch routes it (the tenant's action_params fill in), so a missing parameter is refused before anything runs.
  let item: RoutedItem;
  try {
    item = routeTask(task, s.config, s.pack);
  } catch (error) {
    if (error instanceof InputRejectedError) throw new DrillError(`${action} on ${billNo}: ${error.message}`);
    throw error;
  }
  const tier = siteAction.tiers.browser;
  const stages = tier ? stagesOf(tier) : [];
  const result: DrillResult = {
    drill: 'failed',
    mode: reversible ? 'execute_and_undo' : 'walk_to_commit',
    tenant: tenant.id,
    billNo,
    action,
    inverseAction: siteAction.inverse ?? null,
    taskId,
    key,
    readSource: source,
    before: null,
    afterWrite: null,
    after: null,
    sources: [],
    stages: stages.map((stage, index) => ({
      stage: stage.name,
      line: doneLine(action, index),
      hasDone: stage.done !== undefined,
      doneBefore: null,
      doneAfter: null,
    })),
    writeOutcome: 'not_started',
    compensation: null,
    restored: false,
    durationMs: 0,
  };
  const finish = (reason?: string): DrillResult => ({ ...result, ...(reason ? { reason } : {}), durationMs: Date.now() - began });

  for (const from of sourceNames) {
    const observed = await readFrom(from, billNo);
    result.sources.push({
      source: from,
      before: observed.status ?? null,
      afterWrite: null,
      after: null,
      ...(observed.error ? { error: observed.error } : {}),
    });
  }
  const ownReading = result.sources.find((r) => r.source === source)!;
  if (ownReading.error !== undefined) throw new DrillError(`could not read ${billNo} from ${source}: ${ownReading.error}`);
  result.before = ownReading.before;
  if (result.before === null || !siteAction.appliesTo.includes(result.before)) {
    return finish(`${billNo} is ${result.before}; ${action} applies to ${siteAction.appliesTo.join(', ')}`);
  }
  const unreadable = result.sources.find((r) => r.error !== undefined);
  if (unreadable) return finish(`readback source ${unreadable.source} cannot read ${billNo}: ${unreadable.error}`);

  if (!reversible) {
    // Nothing is clicked: the steps run up to the commit click, which is found and left alone.
    result.walk = await walkToCommit(s, item);
    result.writeOutcome = 'not_written';
    result.after = await read(billNo);
    result.restored = result.after === result.before;
    if (!result.restored) return finish(`${billNo} is ${result.after} after the walk, not ${result.before}: something was written`);
    if (result.walk.settledBeforeCommit) {
      return finish(
        `actions.${action}.tiers.browser.settled already holds before the commit click (${billNo} is still ${result.before}): ` +
          "it cannot tell the write settled, so the write's after picture would be taken at once, before the page shows it; " +
          "make it the item's final status only (exact: true, or within: { row: true }), not a text the page shows anyway",
      );
    }
    result.drill = 'passed';
    return finish();
  }

  const write = await runGuardedWrite(s, task);
  result.writeOutcome = write.output.outcome;
  result.stages = stageProofs(result.stages, await s.audit.events(key));
  for (const reading of result.sources) reading.afterWrite = (await settledFrom(reading.source, billNo)).status ?? null;
  result.afterWrite = result.sources.find((r) => r.source === source)?.afterWrite ?? null;
  const unproven = result.stages.find((p) => p.hasDone && (p.doneBefore !== false || p.doneAfter !== true));
  if (write.output.outcome !== 'done' || unproven) {
    const why = write.output.reason ?? '';
    // The write's own reason names the line when its done check stopped it; otherwise say what the check read.
    const line =
      unproven && !why.includes(unproven.line)
        ? `stage "${unproven.stage}": its done check (${unproven.line}) read ${String(unproven.doneBefore)} before the click ` +
          `and ${String(unproven.doneAfter)} after`
        : '';
    return finish([`the write ended ${write.output.outcome}`, why, line].filter(Boolean).join(': '));
  }
  const target = siteAction.targetStatus;
  const off = target === undefined ? undefined : result.sources.find((r) => r.afterWrite !== target);
  if (off) return finish(`readback source ${off.source} reads ${off.afterWrite} after the write, not ${target}`);
  try {
    const compensation = await compensate(s, { key, requestedBy, reason: 'drill: execute, then undo' });
    result.compensation = { inverseKey: compensation.inverseKey, outcome: compensation.outcome, rolledBack: compensation.rolledBack };
  } catch (error) {
    if (!(error instanceof CompensationRefusedError)) throw error;
    result.compensation = { refused: error.message };
  }
  for (const reading of result.sources) reading.after = (await settledFrom(reading.source, billNo)).status ?? null;
  result.after = result.sources.find((r) => r.source === source)?.after ?? null;
  const notBack = result.sources.find((r) => r.after !== r.before);
  result.restored = notBack === undefined;
  const rolledBack = result.compensation !== null && 'rolledBack' in result.compensation && result.compensation.rolledBack;
  if (result.restored && rolledBack) {
    result.drill = 'passed';
    return finish();
  }
  return finish(
    result.restored
      ? 'the state returned but the compensation was not confirmed by its readback'
      : `${billNo} reads ${notBack!.after} from ${notBack!.source}, not ${notBack!.before}`,
  );
}

/** Each stage's done check, as the write's audit chain recorded it (the last reading before the click and after the commit). */
function stageProofs(proofs: readonly StageProof[], events: readonly AuditEvent[]): StageProof[] {
  const checks = eventsOfType(events, 'stage_done_checked');
  return proofs.map((proof) => {
    const of = checks.filter((e) => e.data.stage === proof.stage);
    const reading = (when: 'before_click' | 'after_commit') => of.findLast((e) => e.data.when === when)?.data.matched ?? null;
    return { ...proof, doneBefore: reading('before_click'), doneAfter: reading('after_commit') };
  });
}

/**
 * Runs an irreversible action's steps up to its first commit click without clicking it: fills, extracts and
 * `expect`s run; the commit click's target is found (it must show) and the page is pictured with it, as the
 * approver's decision would find it. The session is discarded afterwards (a dialog is left open).
 */
async function walkToCommit(s: Services, item: RoutedItem): Promise<WalkResult> {
  const action = s.pack.actions[item.action]!;
  const approverSees = {
    tenant: item.tenant,
    billNo: item.billNo,
    action: item.action,
    description: action.description ?? '',
    amount: own(item.params, 'amount') ?? null,
    requestedBy: item.requestedBy,
  };
  const tier = action.tiers.browser;
  if (item.tier !== 'browser' || !tier) return { steps: [], extracted: {}, screenshot: null, notWalked: [], approverSees };
  const stages = stagesOf(tier);
  return withSession(s, item.identity, 'read', { trace: false, tenant: item.tenant }, async (session) => {
    session.discardOnClose();
    const ctx: StepContext = {
      baseUrl: s.config.vendor.base_url,
      params: { ...readParams(readContextFor(s, item.tenant)), ...item.params, billNo: item.billNo, tenant: item.tenant },
      row: { list: s.pack.list, key: item.billNo },
      sessionLost: s.pack.sessionLost,
      traced: false,
    };
    const walked: string[] = [];
    const extracted: Record<string, string> = {};
    let page = session.page;
    let screenshot: string | null = null;
    let stageIndex = 0;
    walk: for (; stageIndex < stages.length; stageIndex++) {
      for (const step of stages[stageIndex]!.steps) {
        const stepCtx = { ...ctx, params: { ...ctx.params, ...extracted } };
        try {
          const ran = await runStep(page, step, stepCtx, async () => {
            throw new StopBeforeCommit();
          });
          page = ran.page;
          if (ran.extracted && typeof ran.extracted.value === 'string') extracted[ran.extracted.as] = ran.extracted.value;
          walked.push(describeStep(step, stepCtx.params));
        } catch (error) {
          if (!(error instanceof StopBeforeCommit)) throw error;
          walked.push(`${describeStep(step, stepCtx.params)} — found, not clicked`);
          const shot = await page.screenshot({ fullPage: true });
          screenshot = (await s.evidence.put(evidenceKey(item, 'drill-before-commit.png'), shot, 'image/png')).key;
          break walk;
        }
      }
    }
    if (screenshot === null) throw new DrillError(`action ${item.action} has no commit click to stop at: every step ran`);
    const notWalked = stages.slice(stageIndex + 1).map((st) => st.name);
    // The after picture waits for `settled`; one that holds before anything was clicked proves nothing about the write.
    // Only for a one-stage walk: a later stage's state cannot be reached without the first one's write.
    const settledBeforeCommit =
      tier.settled && notWalked.length === 0
        ? (
            await settled(
              page,
              { ...tier.settled, timeoutMs: Math.min(tier.settled.timeoutMs, SETTLED_PROBE_MS) },
              { ...ctx, params: { ...ctx.params, ...extracted } },
            )
          ).settled
        : undefined;
    return {
      steps: walked,
      extracted,
      screenshot,
      notWalked,
      approverSees,
      ...(settledBeforeCommit === undefined ? {} : { settledBeforeCommit }),
    };
  });
}

const Flags = z.object({
  tenant: TenantId.default('acme').meta({ value: 'tenant', description: 'whose bill to write and undo' }),
  bill: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ value: 'key', description: 'the bill (default: the first pending one the action applies to)' }),
  action: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case')
    .optional()
    .meta({ value: 'name', description: 'a reversible action (default mark_processed)' }),
  'sim-port': Port.default(0).meta({ value: 'port', description: 'simulator port (0: a free one)' }),
  seed: z.coerce.number().int().min(0).default(1).meta({ value: 'n', description: "the simulator's data seed" }),
  config: ConfigPath.default('config/paperclip.local.yaml'),
  'data-dir': DataDir.optional(),
});

export const DRILL_SPEC: CommandSpec<typeof Flags> = {
  name: 'drill',
  summary: 'executes one reversible write on the simulator, undoes it, checks the state returned',
  description: `Starts the vendor simulator and Paperclip on the embedded stack (as npm start
does), executes one reversible action on one pending bill of the tenant through
the guarded path, compensates it, and checks with independent reads that the
vendor state returned to where it was. Prints one JSON line; exit code 0 when
the state returned, 1 when it did not, 2 for bad arguments.`,
  flags: Flags,
};

export async function runDrillCommand(argv: string[]): Promise<number> {
  const { flags } = parseCommand(DRILL_SPEC, argv);
  const env = await startLocalEnvironment({
    simPort: flags['sim-port'],
    seed: flags.seed,
    config: flags.config,
    ...(flags['data-dir'] ? { dataDir: flags['data-dir'] } : {}),
  });
  try {
    process.stderr.write(`drill: ${flags.action ?? 'mark_processed'} on one pending bill of ${flags.tenant}, then its inverse\n`);
    const result = await runDrill(env.paperclip.services, {
      tenant: flags.tenant,
      ...(flags.bill ? { billNo: flags.bill } : {}),
      ...(flags.action ? { action: flags.action } : {}),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result.drill === 'passed' ? 0 : 1;
  } catch (error) {
    if (!(error instanceof DrillError)) throw error;
    process.stderr.write(`paperclip drill: ${error.message}\n`);
    return 2;
  } finally {
    await env.stop();
  }
}

export const drillCommand: Command = { spec: DRILL_SPEC, run: runDrillCommand };

const SitepackDrillFlags = z.object({
  config: ConfigPath,
  tenant: TenantId.meta({ value: 'tenant', description: 'a tenant of the config, whose sandbox item the drill writes' }),
  action: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case')
    .meta({ value: 'name', description: 'the site-pack action to prove' }),
  bill: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ value: 'key', description: 'the sandbox item (default: the first listed one the action applies to)' }),
  param: KeyValueList.meta({
    value: 'name=value',
    description: "an action parameter (repeatable; the tenant's action_params fill the rest)",
  }),
  'data-dir': DataDir.default('.paperclip'),
});

export const SITEPACK_DRILL_SPEC: CommandSpec<typeof SitepackDrillFlags> = {
  name: 'sitepack drill',
  summary: "proves one write action of the pack on a sandbox item of the config's vendor: forward, then back",
  description: `Starts Paperclip on the embedded local stack (state in --data-dir) against the
config's vendor.base_url and proves one action on one item, before any batch.

A reversible action is executed through the guarded path and undone by its
inverse: each stage's done check must read false before its click and true
after it, and every readback source must read the target state after the write
and the state before it after the inverse. A done check that cannot see its own
effect stops the write after one click and fails the drill, naming the pack line.

An irreversible action is walked up to its commit click without clicking it:
fills, extracts and expects run, the page is pictured with its dialog (in the
evidence bucket), and the drill reports what the approver would see.

Run it on a sandbox item: a reversible drill really writes (and undoes).
Prints each stage and source to stderr, one JSON line to stdout. Exit code 0
when the drill passed, 1 when it failed, 2 for bad arguments or a bad config.`,
  flags: SitepackDrillFlags,
};

export async function runSitepackDrill(argv: string[]): Promise<number> {
  const { flags } = parseCommand(SITEPACK_DRILL_SPEC, argv);
  const configPath = resolve(flags.config);
  const { config } = loadRuntime(configPath);
  let session: Awaited<ReturnType<typeof startEmbeddedSession>>;
  try {
    session = await startEmbeddedSession({ vendorBaseUrl: config.vendor.base_url, configPath, dataDir: flags['data-dir'] });
  } catch (error) {
    if (!(error instanceof DataFolderError)) throw error;
    throw new UsageError('sitepack drill', [{ path: '--data-dir', message: error.message }]);
  }
  try {
    const result = await runDrill(session.services, {
      tenant: flags.tenant,
      action: flags.action,
      params: flags.param,
      ...(flags.bill ? { billNo: flags.bill } : {}),
    });
    for (const line of describeDrill(result)) process.stderr.write(`${line}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result.drill === 'passed' ? 0 : 1;
  } catch (error) {
    if (!(error instanceof DrillError)) throw error;
    process.stderr.write(`paperclip sitepack drill: ${error.message}\n`);
    return 2;
  } finally {
    await session.close();
  }
}

/** The drill as a person reads it: each stage's done check, each source's readings, the verdict. */
export function describeDrill(r: DrillResult): string[] {
  const lines = [
    `drill ${r.action} on ${r.billNo} (${r.tenant}), ${r.mode === 'execute_and_undo' ? 'write, then undo' : 'walked up to the commit click'}`,
  ];
  const show = (v: boolean | null) => (v === null ? '—' : String(v));
  for (const p of r.stages) {
    lines.push(
      p.hasDone
        ? `  stage ${p.stage}: done before ${show(p.doneBefore)}, after ${show(p.doneAfter)}  (${p.line})`
        : `  stage ${p.stage}: no done check`,
    );
  }
  for (const x of r.sources) {
    lines.push(`  ${x.source}: ${[x.before, x.afterWrite, x.after].map((v) => v ?? '—').join(' → ')}${x.error ? `  (${x.error})` : ''}`);
  }
  if (r.walk) {
    for (const step of r.walk.steps) lines.push(`  step ${step}`);
    for (const [name, value] of Object.entries(r.walk.extracted)) lines.push(`  the page shows ${name} = ${value}`);
    const a = r.walk.approverSees;
    lines.push(`  the approver would see: ${a.tenant} ${a.billNo} ${a.action}, amount ${a.amount ?? '—'}, requested by ${a.requestedBy}`);
    if (r.walk.screenshot) lines.push(`  pictured before the commit click: ${r.walk.screenshot}`);
  }
  lines.push(r.drill === 'passed' ? 'drill passed' : `drill FAILED: ${r.reason ?? ''}`);
  return lines;
}

export const sitepackDrillCommand: Command = { spec: SITEPACK_DRILL_SPEC, run: runSitepackDrill };
