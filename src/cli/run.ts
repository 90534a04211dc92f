import { cliRequester, RequestedByFlag } from './requester.js';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { runGuardedWrite } from '../app/compensation.js';
import { loadRuntime } from '../config/runtime.js';
import { InputRejectedError } from '../domain/errors.js';
import { routeTask } from '../domain/routing.js';
import { idempotencyKey, TaskId, type WriteTask } from '../domain/task.js';
import type { EmbeddedPaperclip } from '../../twin/runtime/index.js';
import {
  ConfigPath,
  DataDir,
  FailOn,
  KeyValueList,
  parseCommand,
  Port,
  TenantId,
  UsageError,
  type Command,
  type CommandSpec,
} from './args.js';
import { approvalRecipients, log, logStack, newTaskId, runBatchCommand } from './batch-output.js';
import { DataFolderError, startEmbeddedSession } from './data-folder.js';

const Flags = z
  .object({
    config: ConfigPath,
    tenant: TenantId.meta({ value: 'tenant', description: 'a tenant of the config' }),
    task: TaskId.optional().meta({
      value: 'id',
      description: 'the task id; the same id again finds every item already claimed (default: T-<now>-<tenant>)',
    }),
    item: z.string().min(1).max(64).optional().meta({ value: 'key', description: 'run one guarded write on this item instead of a batch' }),
    action: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case, e.g. mark_processed')
      .optional()
      .meta({ value: 'name', description: 'with --item: the site-pack action to run' }),
    param: KeyValueList.meta({ value: 'name=value', description: 'with --item: an action parameter (repeatable)' }),
    'data-dir': DataDir.default('.paperclip'),
    keep: z.boolean().default(false).meta({ description: 'stay up after the batch, so approval links keep working (Ctrl-C to stop)' }),
    'approval-port': Port.optional().meta({ value: 'port', description: 'port of the approval pages (default: a free one)' }),
    'requested-by': RequestedByFlag,
    'fail-on': FailOn,
    'json-lines': z.boolean().default(false).meta({
      description: 'also print one JSON line per item as it finishes, before the summary line (paperclip items shows them later)',
    }),
  })
  .superRefine((f, ctx) => {
    if (f.item && !f.action) ctx.addIssue({ code: 'custom', path: ['action'], message: 'is required with --item: name the action to run' });
    if (!f.item && f.action) ctx.addIssue({ code: 'custom', path: ['item'], message: 'is required with --action: name the item to write' });
    if (f.item && f['fail-on'].length > 0)
      ctx.addIssue({
        code: 'custom',
        path: ['fail-on'],
        message: 'only goes with a batch: --item already exits 1 unless the outcome is done',
      });
    if (!f.item && Object.keys(f.param).length > 0)
      ctx.addIssue({ code: 'custom', path: ['param'], message: 'only goes with --item (a batch takes its parameters from the config)' });
  });

export const RUN_SPEC: CommandSpec<typeof Flags> = {
  name: 'run',
  summary: "runs a batch (or one guarded write) against the config's vendor.base_url, without the simulator",
  description: `Starts Paperclip on the embedded local stack (DynamoDB, S3, SES and Step Functions
emulated here, state kept in --data-dir) and runs one batch for the tenant
against the back office at the config's vendor.base_url: read the list, then one
guarded write per pending item. Progress goes to stderr, one JSON summary line
to stdout. Exit code 0 when the batch succeeded, 1 when it failed (its list
could not be read, or the execution failed), 2 for bad arguments or a bad
config (nothing started), 3 when it succeeded but items ended in an outcome
named by --fail-on (e.g. --fail-on takeover,error): a batch succeeds when every
item reached an outcome, whatever the outcome was.

With --json-lines, stdout also gets one JSON line per item as it finishes (task,
tenant, key, item, action, outcome, reason, evidence), before the summary line,
which stays last. An item an earlier run of the same --task settled is printed
as already_<outcome> (already_done), and counted so in the summary line; the
first run's summary (batch.json) and pages are kept, a re-run's summary goes
beside them (batch.rerun-<execution>.json).

With --item <key> --action <name> [--param k=v ...] it runs one guarded write
instead and prints its outcome as one JSON line; exit code 0 when the outcome
is done, 1 otherwise. An action that needs an approval waits for it here: the
approver's mail is in the local SES inbox, and this process serves the approval
page until it is decided.`,
  flags: Flags,
};

type RunFlags = z.output<typeof Flags>;

/** A rejected task, said in terms of the flag that carries the field. */
function rejectionAsUsage(error: InputRejectedError): UsageError {
  const field = error.field.split('.')[0] ?? '';
  const flag =
    { billNo: '--item', action: '--action', tenant: '--tenant', params: '--param', taskId: '--task', requestedBy: '--requested-by' }[
      field
    ] ?? '';
  return new UsageError('run', [{ path: flag, message: error.message }]);
}

async function runOneWrite(paperclip: EmbeddedPaperclip, task: WriteTask): Promise<number> {
  const s = paperclip.services;
  const key = idempotencyKey(task);
  const needsApproval = s.config.write_policy.approval_required.includes(task.action);
  log(`${task.billNo} ${task.action}: guarded write ${key}${needsApproval ? ' (waits for an approval)' : ''}`);
  const timeoutSeconds = needsApproval ? s.config.write_policy.approval_timeout_seconds + 600 : undefined;
  const running = runGuardedWrite(s, task, { timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000 });
  let finished = false;
  if (needsApproval) void announceApprovalMail(paperclip, task, key, timeoutSeconds!, () => finished);
  const { executionArn, output } = await running.finally(() => {
    finished = true;
  });
  const claim = await s.claims.get(key);
  process.stdout.write(
    `${JSON.stringify({
      task: task.taskId,
      tenant: task.tenant,
      item: task.billNo,
      action: task.action,
      key,
      outcome: output.outcome,
      ...(output.reason ? { reason: output.reason } : {}),
      ...(claim ? { claim: claim.status } : {}),
      executionArn,
    })}\n`,
  );
  return output.outcome === 'done' ? 0 : 1;
}

/**
 * Says who the approval mail went to, or, when none went out within a minute,
 * what the write waits for instead and how long it will, so a run never waits
 * in silence. Quiet once the write has finished.
 */
async function announceApprovalMail(
  paperclip: EmbeddedPaperclip,
  task: WriteTask,
  key: string,
  timeoutSeconds: number,
  isFinished: () => boolean,
): Promise<void> {
  const waitMs = 60_000;
  try {
    const recipients = await approvalRecipients(paperclip, task, 1, waitMs);
    if (isFinished()) return;
    const { inboxAddress } = await import('../../twin/aws/index.js');
    const inbox = inboxAddress(paperclip.stack.endpoints.sesInbox);
    for (const { to } of recipients) log(`  approval mailed to ${to}: open it in the inbox at ${inbox} (the approval emails URL above)`);
    if (recipients.length > 0) return;
    const claim = await paperclip.services.claims.get(key);
    if (isFinished()) return;
    log(
      `  no approval mail after ${waitMs / 1000} s (claim: ${claim?.status ?? 'not claimed yet'}); ` +
        `still waiting for the workflow, at most ${timeoutSeconds} s in all, then the write ends as error`,
    );
  } catch (error) {
    // The stack closes when the write ends; a watcher still polling it has nothing left to say.
    if (!isFinished())
      log(`  could not read the approval requests or the inbox: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function runRun(argv: string[]): Promise<number> {
  const { flags } = parseCommand(RUN_SPEC, argv);
  const configPath = resolve(flags.config);
  // Config and site pack are checked against each other before anything starts.
  const { config, sitePack } = loadRuntime(configPath);
  if (!config.tenants.some((t) => t.id === flags.tenant)) {
    throw new UsageError('run', [
      {
        path: '--tenant',
        message: `"${flags.tenant}" is not a tenant of ${flags.config}; its tenants: ${config.tenants.map((t) => t.id).join(', ')}`,
      },
    ]);
  }
  const taskId = flags.task ?? newTaskId(flags.tenant);
  const requestedBy = cliRequester(config, flags['requested-by'], 'run');
  const task = flags.item ? oneTask(flags, taskId, requestedBy) : undefined;
  if (task) {
    try {
      routeTask(task, config, sitePack);
    } catch (error) {
      if (error instanceof InputRejectedError) throw rejectionAsUsage(error);
      throw error;
    }
  }
  const dataDir = resolve(flags['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  let session: Awaited<ReturnType<typeof startEmbeddedSession>>;
  try {
    session = await startEmbeddedSession({
      vendorBaseUrl: config.vendor.base_url,
      configPath,
      dataDir,
      ...(flags['approval-port'] !== undefined ? { approvalPort: flags['approval-port'] } : {}),
    });
  } catch (error) {
    if (!(error instanceof DataFolderError)) throw error;
    throw new UsageError('run', [{ path: '--data-dir', message: error.message }]);
  }
  log(`vendor             ${config.vendor.base_url}  (${sitePack.site})`);
  logStack(session.paperclip, dataDir);
  try {
    if (task) return await runOneWrite(session.paperclip, task);
    return await runBatchCommand(session.paperclip, {
      tenant: flags.tenant,
      taskId,
      requestedBy,
      keep: flags.keep,
      failOn: flags['fail-on'],
      jsonLines: flags['json-lines'],
      dataDirLabel: flags['data-dir'],
    });
  } finally {
    await session.close();
  }
}

function oneTask(flags: RunFlags, taskId: string, requestedBy: string): WriteTask {
  return { taskId, tenant: flags.tenant, billNo: flags.item!, action: flags.action!, params: flags.param, requestedBy };
}

export const runCommand: Command = { spec: RUN_SPEC, run: runRun };
