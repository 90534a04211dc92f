import { z } from 'zod';
import type { Services } from '../app/services.js';
import { withSession } from '../app/sessions.js';
import { compensate, CompensationRefusedError, runGuardedWrite, type CompensationResult } from '../app/compensation.js';
import { observeStatus, readContextFor, readList } from '../browser/vendor-reads.js';
import { browserlessApi } from '../app/ownership.js';
import type { OpenedSession } from '../browser/identity-sessions.js';
import { idempotencyKey, type WriteTask } from '../domain/task.js';
import type { ReadbackSource } from '../sitepack/schema.js';
import { ConfigPath, DataDir, parseCommand, Port, TenantId, type Command, type CommandSpec } from './args.js';
import { startLocalEnvironment } from './demo.js';
import { deadline } from '../lib/deadline.js';
import { own } from '../lib/own.js';

/**
 * The execute-then-undo drill: one reversible write on one pending bill, then
 * its compensation, with the vendor state read before and after through a
 * source of its own. Passing means the way back works today, not just that
 * it was registered.
 */

export class DrillError extends Error {
  override readonly name = 'DrillError';
}

export interface DrillResult {
  drill: 'passed' | 'failed';
  tenant: string;
  billNo: string;
  action: string;
  inverseAction: string;
  taskId: string;
  key: string;
  /** The source the drill read the vendor state from, independent of the guarded path's readback. */
  readSource: ReadbackSource;
  before: string | null;
  afterWrite: string | null;
  after: string | null;
  writeOutcome: string;
  compensation: Pick<CompensationResult, 'inverseKey' | 'outcome' | 'rolledBack'> | { refused: string } | null;
  restored: boolean;
  reason?: string;
  durationMs: number;
}

export interface DrillOptions {
  tenant: string;
  billNo?: string;
  action?: string;
  taskId?: string;
  requestedBy?: string;
}

/** The API when the site has one (another channel entirely), else the settlement file, else the detail page. */
function independentSource(s: Services): ReadbackSource {
  if (s.pack.api) return 'api';
  if (s.pack.export) return 'export';
  return 'detail';
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
  if (siteAction.reversibility !== 'reversible' || !siteAction.inverse) {
    throw new DrillError(`action "${action}" is ${siteAction.reversibility} without an inverse; a drill needs a reversible action`);
  }
  const identity = tenant.identity;
  const source = independentSource(s);
  const read = async (billNo: string): Promise<string | null> => {
    // A token API is read without a browser; a cookie API (like every page source) needs the identity's session.
    const api = source === 'api' ? await browserlessApi(s, identity) : undefined;
    const observe = (session?: OpenedSession) =>
      observeStatus(source, {
        pack: s.pack,
        baseUrl: s.config.vendor.base_url,
        tenant: tenant.id,
        billNo,
        api,
        ...(session ? { session } : {}),
      });
    const observation = api ? await observe() : await withSession(s, identity, 'read', { trace: false }, (session) => observe(session));
    if (observation.status === undefined)
      throw new DrillError(`could not read ${billNo} from ${source}: ${observation.error ?? 'not listed'}`);
    return observation.status;
  };
  // A late settle can still be moving when the inverse's readback confirmed; wait it out before the final read.
  const settledRead = async (billNo: string): Promise<string | null> => {
    const limit = deadline(s.config.write_policy.readback_deadline_ms);
    let status = await read(billNo);
    const settling = [...siteAction.settlingStatuses, ...(s.pack.actions[siteAction.inverse!]?.settlingStatuses ?? [])];
    while (status !== null && settling.includes(status) && !limit.expired) {
      await limit.sleep(s.config.write_policy.readback_poll_ms);
      status = await read(billNo);
    }
    return status;
  };

  const billNo =
    options.billNo ??
    (await withSession(s, identity, 'read', { trace: false }, async (session) => {
      const rows = await readList(session, readContextFor(s, tenant.id));
      return rows.find(
        (r) => siteAction.appliesTo.includes(r.status) && r.kind !== undefined && own(tenant.actions_by_kind, r.kind) === action,
      )?.billNo;
    }));
  if (!billNo)
    throw new DrillError(`tenant ${tenant.id} has no bill that ${action} applies to (${siteAction.appliesTo.join(', ')}); pass --bill`);

  const taskId = options.taskId ?? `T-drill-${Date.now().toString(36)}`;
  const requestedBy = options.requestedBy ?? 'drill';
  const task: WriteTask = { taskId, tenant: tenant.id, billNo, action, params: {}, requestedBy };
  const key = idempotencyKey(task);
  const result: DrillResult = {
    drill: 'failed',
    tenant: tenant.id,
    billNo,
    action,
    inverseAction: siteAction.inverse,
    taskId,
    key,
    readSource: source,
    before: null,
    afterWrite: null,
    after: null,
    writeOutcome: 'not_started',
    compensation: null,
    restored: false,
    durationMs: 0,
  };
  const finish = (reason?: string): DrillResult => ({ ...result, ...(reason ? { reason } : {}), durationMs: Date.now() - began });

  result.before = await read(billNo);
  if (result.before === null || !siteAction.appliesTo.includes(result.before)) {
    return finish(`${billNo} is ${result.before}; ${action} applies to ${siteAction.appliesTo.join(', ')}`);
  }
  const write = await runGuardedWrite(s, task);
  result.writeOutcome = write.output.outcome;
  result.afterWrite = await read(billNo);
  if (write.output.outcome !== 'done') return finish(`the write ended ${write.output.outcome}: ${write.output.reason ?? ''}`.trim());
  try {
    const compensation = await compensate(s, { key, requestedBy, reason: 'drill: execute, then undo' });
    result.compensation = { inverseKey: compensation.inverseKey, outcome: compensation.outcome, rolledBack: compensation.rolledBack };
  } catch (error) {
    if (!(error instanceof CompensationRefusedError)) throw error;
    result.compensation = { refused: error.message };
  }
  result.after = await settledRead(billNo);
  result.restored = result.after === result.before;
  const rolledBack = result.compensation !== null && 'rolledBack' in result.compensation && result.compensation.rolledBack;
  if (result.restored && rolledBack) {
    result.drill = 'passed';
    return finish();
  }
  return finish(
    result.restored
      ? 'the state returned but the compensation was not confirmed by its readback'
      : `${billNo} is ${result.after}, not ${result.before}`,
  );
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
