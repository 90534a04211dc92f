import { describeElsewhere, takeoverQueuesElsewhere } from './takeover-elsewhere.js';
import { z } from 'zod';
import { visibleText } from '../domain/visible-text.js';
import type { Services } from '../app/services.js';
import { loadConfig } from '../config/load.js';
import { parseCommand, TenantId, UsageError, type Command, type CommandSpec, dataFolderFlags } from './args.js';
import { configForFolder, openDataFolder, DataFolderError } from './data-folder.js';
import { evidenceLink } from '../app/takeover/queue.js';
import { resolveTakeover, TakeoverRefusedError } from '../app/takeover/resolve.js';
import { KEY_PATTERN, KEY_SHAPE } from '../domain/task.js';
import { findOrphanedClaims, findUnclaimedItems, recoverOrphanedClaims } from '../app/takeover/recover.js';
import { RESOLUTIONS, type TakeoverEntry } from '../app/ports/takeovers.js';

const KeySchema = z.string().superRefine((key, ctx) => {
  if (!KEY_PATTERN.test(key))
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(key.slice(0, 60))} is not a key; ${KEY_SHAPE} (see paperclip takeover list)`,
    });
});
const KeyArg = [{ name: 'key', description: 'the idempotency key of the item (paperclip takeover list)', schema: KeySchema }];

const Common = {
  ...dataFolderFlags,
  'vendor-url': z
    .url({ message: 'must be the back office base URL, e.g. http://127.0.0.1:4100' })
    .optional()
    .meta({ value: 'url', description: 'the back office, when this command starts the stack (default: vendor.base_url)' }),
};

const QUEUE = `The human takeover queue of a local data folder. If a Paperclip process
(npm start -- --keep, paperclip run --keep, a chaos runner) holds the folder, the
command works through that process's endpoints; otherwise it starts the
embedded stack on the folder without running a batch. Without --config it uses
the config the folder was run with; a --config of other tables, or a folder
whose recorded config is gone, is refused naming the prefix and bucket it needs,
so an empty queue is never one read from the wrong tables.

Exit codes (list, show, recover): 0 done; 2 bad arguments, no data folder, a
folder of another config, or an unknown key (one line, nothing changed); 4 a
store that does not answer.`;

const ListFlags = z
  .object({
    ...Common,
    status: z
      .enum(['open', 'resolved', 'all'], { error: '--status must be open, resolved or all' })
      .default('open')
      .meta({ description: 'which entries' }),
    tenant: TenantId.optional().meta({ value: 'tenant', description: 'only this tenant' }),
    json: z.boolean().default(false).meta({ description: 'one JSON line per entry' }),
  })
  .strict();
const ShowFlags = z.object({ ...Common, json: z.boolean().default(false).meta({ description: 'print as JSON' }) }).strict();
const ResolveFlags = z
  .object({
    ...Common,
    as: z.enum(RESOLUTIONS, { error: `--as must be one of ${RESOLUTIONS.join(', ')}` }).meta({
      description: 'done: you verified or did it by hand; abandon: it will not happen; retry: guarded path again, readback first',
    }),
    note: visibleText('--note', { max: 2000, multiline: true, required: '--note is required: say what you checked or did' }).meta({
      value: 'text',
      description: 'what you checked or did (audit trail)',
    }),
    operator: z
      .email({ message: '--operator must be your email address (it is recorded in the audit trail)' })
      .meta({ value: 'email', description: 'who resolves' }),
    detach: z.boolean().default(false).meta({ description: 'with --as retry: do not wait for the retry to finish' }),
  })
  .strict();
const RecoverFlags = z
  .object({
    ...Common,
    task: z
      .string()
      .regex(/^T-[A-Za-z0-9-]{1,60}$/, 'task ids look like T-20261202-acme')
      .optional()
      .meta({ value: 'taskId', description: 'only this task' }),
    'wait-for-leases': z.boolean().default(false).meta({ description: 'wait for live leases to lapse instead of skipping them' }),
  })
  .strict();

const LIST_SPEC: CommandSpec<typeof ListFlags> = {
  name: 'takeover list',
  summary: 'lists the human takeover queue',
  description: QUEUE,
  flags: ListFlags,
};
const SHOW_SPEC: CommandSpec<typeof ShowFlags> = {
  name: 'takeover show',
  summary: 'shows one takeover item: reason, claim, evidence links, audit trail',
  description: QUEUE,
  flags: ShowFlags,
  positionals: KeyArg,
};
const RESOLVE_SPEC: CommandSpec<typeof ResolveFlags> = {
  name: 'takeover resolve',
  summary: 'closes a takeover item as done, abandon or retry (retry reads the vendor back before it may click)',
  description: `${QUEUE}

  --as done      you verified (or did) the write by hand: claim DONE (done_by_operator)
  --as abandon   the write will not happen: claim FAILED
  --as retry     the item goes through the guarded path again, reading the vendor back
                 first (the config's readback_sources, in a session of its own):
                 - the target state seen: confirmed and completed, nothing is clicked;
                 - the old state seen: not an answer until the settle window after the
                   last commit click (write_policy.readback_deadline_ms) has passed; a
                   vendor that applies the change slowly is waited for, not clicked again;
                 - an interim or unreadable state to the end of the window: back to the
                   queue, nothing is clicked;
                 - only the old state, settled after the window, lets the action's policy
                   (retry_after_negative_readback, max_write_attempts) click once more; a
                   stage whose done check shows it already landed is skipped.
                 Not guaranteed: a vendor that applies a change later than the settle
                 window, and a stage with no done check in a multi-stage action.

Exit codes: 0 resolved (a retry finished done, or was started with --detach);
1 the retry did not close the item: it ended in takeover again (the item is back
in the queue as the next round) or failed; 2 bad input, or the item's state does
not allow the resolution (nothing changed).`,
  flags: ResolveFlags,
  positionals: KeyArg,
};
const RECOVER_SPEC: CommandSpec<typeof RecoverFlags> = {
  name: 'takeover recover',
  summary: 'resumes claims whose execution died (e.g. a killed runner), readback first',
  description: QUEUE,
  flags: RecoverFlags,
};

export type TakeoverCommand =
  | { sub: 'list'; flags: z.output<typeof ListFlags> }
  | { sub: 'show'; key: string; flags: z.output<typeof ShowFlags> }
  | { sub: 'resolve'; key: string; flags: z.output<typeof ResolveFlags> }
  | { sub: 'recover'; flags: z.output<typeof RecoverFlags> };

/** Parses and validates the whole command line before anything is opened or changed. */
export function parseTakeoverArgs(argv: string[]): TakeoverCommand {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list':
      return { sub, flags: parseCommand(LIST_SPEC, rest).flags };
    case 'show': {
      const { flags, positionals } = parseCommand(SHOW_SPEC, rest);
      return { sub, key: positionals[0]!, flags };
    }
    case 'resolve': {
      const { flags, positionals } = parseCommand(RESOLVE_SPEC, rest);
      return { sub, key: positionals[0]!, flags };
    }
    case 'recover':
      return { sub, flags: parseCommand(RECOVER_SPEC, rest).flags };
    default:
      throw new UsageError('takeover', [
        { path: '', message: `${sub ? `unknown subcommand "${sub}"` : 'a subcommand is required'}; use list, show, resolve or recover` },
      ]);
  }
}

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const short = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

function entryLine(e: TakeoverEntry): string {
  return [
    e.key,
    e.status.padEnd(8),
    e.tenant.padEnd(8),
    e.billNo.padEnd(18),
    e.action.padEnd(16),
    e.createdAt.slice(0, 19),
    short(e.reason, 90),
  ].join('  ');
}

/** Runs a parsed command against open services; returns the exit code. */
export async function executeTakeover(
  s: Services,
  command: TakeoverCommand,
  io: Io = processIo,
  /** Where else the folder holds takeover items, when this config's queue has none: the refusal's text, else undefined. */
  elsewhere?: () => Promise<string | undefined>,
): Promise<number> {
  const store = s.takeovers;
  switch (command.sub) {
    case 'list': {
      const statuses =
        command.flags.status === 'all'
          ? (['OPEN', 'RESOLVED'] as const)
          : ([command.flags.status.toUpperCase() as 'OPEN' | 'RESOLVED'] as const);
      const entries = (await Promise.all(statuses.map((st) => store.list(st, command.flags.tenant)))).flat();
      entries.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      // An empty queue is printed only when the folder holds no queue this config does not read.
      const unread = entries.length === 0 && elsewhere ? await elsewhere() : undefined;
      if (unread) throw new TakeoverRefusedError(unread);
      if (command.flags.json) {
        for (const e of entries) io.out(JSON.stringify(e));
        return 0;
      }
      if (entries.length === 0) {
        io.out(
          `no ${command.flags.status === 'all' ? '' : `${command.flags.status} `}takeover items${command.flags.tenant ? ` for ${command.flags.tenant}` : ''}`,
        );
        return 0;
      }
      for (const e of entries) io.out(entryLine(e));
      io.out(`${entries.length} item(s); paperclip takeover show <key> for the evidence`);
      return 0;
    }
    case 'show': {
      const entry = await store.get(command.key);
      const unread = !entry && elsewhere ? await elsewhere() : undefined;
      if (unread) throw new TakeoverRefusedError(unread);
      if (!entry) throw new TakeoverRefusedError(`no takeover item ${command.key}; paperclip takeover list --status all shows every item`);
      const claim = await s.claims.get(command.key);
      const audit = await s.audit.events(command.key);
      if (command.flags.json) {
        io.out(
          JSON.stringify({
            entry,
            claim: claim ?? null,
            audit: audit.map((e) => ({ seq: e.seq, at: e.at, type: e.type, actor: e.actor })),
          }),
        );
        return 0;
      }
      const r = entry.resolution;
      io.out(
        [
          `key        ${entry.key}`,
          `status     ${entry.status} (round ${entry.round}, opened ${entry.createdAt}${entry.round > 1 ? `, first ${entry.firstOpenedAt}` : ''})`,
          `item       ${entry.tenant} ${entry.billNo} ${entry.action} as ${entry.identity} (task ${entry.taskId})`,
          `reason     ${entry.reason}`,
          `error      ${entry.errorName ?? '—'}`,
          `reached    ${entry.stage}, tier ${entry.tier}${entry.degraded ? ', degraded readback' : ''}`,
          `claim      ${claim ? `${claim.status} v${claim.version} (${claim.outcome ?? ''})` : 'missing'}`,
          `execution  ${entry.executionArn}`,
          `notified   ${entry.notified.join(', ') || '—'}${entry.notifyError ? ` (mail failed: ${entry.notifyError})` : ''}`,
          ...(r
            ? [
                `resolution ${r.as} by ${r.operator} at ${r.at}: ` +
                  `${r.note}${r.retryExecutionArn ? `\n           retry ${r.retryExecutionArn} -> ${r.retryOutcome ?? 'running'}` : ''}`,
              ]
            : []),
          'evidence',
          ...entry.evidence.map((k) => `  ${evidenceLink(entry, k)}`),
          'audit',
          ...audit.map((e) => `  ${String(e.seq).padStart(3)} ${e.at} ${e.type.padEnd(22)} ${e.actor}`),
        ].join('\n'),
      );
      return 0;
    }
    case 'resolve': {
      const { flags } = command;
      const result = await resolveTakeover(
        s,
        { key: command.key, as: flags.as, note: flags.note, operator: flags.operator },
        { wait: !flags.detach },
      );
      io.out(`resolved ${result.key} as ${result.as} by ${flags.operator.toLowerCase()}: claim ${result.claimStatus}`);
      if (result.as === 'retry') {
        const arn = result.entry.resolution?.retryExecutionArn ?? result.retry?.executionArn;
        io.out(
          result.retry
            ? `retry ${arn}: ${result.retry.outcome}${result.retry.reason ? ` (${result.retry.reason})` : ''}`
            : `retry ${arn} started (readback first)`,
        );
        // The operator asked for the item to be closed by a retry: one that did not close it is not a success.
        if (result.retry && result.retry.outcome !== 'done') {
          io.err(`the retry did not close ${result.key}; paperclip takeover show ${result.key}`);
          return 1;
        }
      }
      return 0;
    }
    case 'recover': {
      const taskIds = command.flags.task ? [command.flags.task] : undefined;
      const orphans = await findOrphanedClaims(s, taskIds ? { taskIds } : {});
      const unclaimed = await findUnclaimedItems(s, taskIds ? { taskIds } : {});
      if (orphans.length === 0 && unclaimed.length === 0) {
        io.out('no claims are held by a dead execution, and no item lost its execution before a claim');
        return 0;
      }
      io.out(`${orphans.length} claim(s) held by a dead execution`);
      if (unclaimed.length > 0) io.out(`${unclaimed.length} item(s) whose execution ended before anything claimed them`);
      const results = await recoverOrphanedClaims(s, {
        ...(taskIds ? { taskIds } : {}),
        waitForLeases: command.flags['wait-for-leases'],
        log: io.err,
      });
      for (const r of results)
        io.out(
          `${r.key} ${r.billNo} ${r.from}: ${r.execution ? `${r.execution.outcome}${r.execution.reason ? ` (${r.execution.reason})` : ''}` : r.status}`,
        );
      return 0;
    }
  }
}

/** `paperclip takeover ...`: validates, opens the data folder, runs, closes. */
export async function runTakeover(argv: string[], io: Io = processIo): Promise<number> {
  const command = parseTakeoverArgs(argv);
  const { flags } = command;
  let session: Awaited<ReturnType<typeof openDataFolder>>;
  try {
    const configPath = configForFolder(flags['data-dir'], flags.config);
    const vendorBaseUrl = flags['vendor-url'] ?? loadConfig(configPath).vendor.base_url;
    session = await openDataFolder({ dataDir: flags['data-dir'], configPath, vendorBaseUrl });
  } catch (error) {
    if (error instanceof DataFolderError) {
      io.err(error.message);
      return 2;
    }
    throw error;
  }
  try {
    if (session.mode === 'attached') io.err(`using the running Paperclip on ${session.dataDir}`);
    const services = session.services;
    const elsewhere = async () => {
      const found = await takeoverQueuesElsewhere(services);
      return found.length > 0 ? describeElsewhere(found, services.config.prefix, session.dataDir) : undefined;
    };
    return await executeTakeover(services, command, io, elsewhere);
  } catch (error) {
    if (error instanceof TakeoverRefusedError) {
      io.err(error.message);
      return 2;
    }
    throw error;
  } finally {
    await session.close();
  }
}

export const takeoverCommands: Command[] = [LIST_SPEC, SHOW_SPEC, RESOLVE_SPEC, RECOVER_SPEC].map((spec) => ({
  spec,
  run: (argv: string[]) => runTakeover([spec.name.split(' ')[1]!, ...argv]),
}));
