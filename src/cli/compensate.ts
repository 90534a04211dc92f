import { cliRequester, RequestedByFlag } from './requester.js';
import { z } from 'zod';
import { visibleText } from '../domain/visible-text.js';
import { KEY_PATTERN, KEY_SHAPE } from '../domain/task.js';
import type { Services } from '../app/services.js';
import { createServices } from '../composition/services.js';
import { compensate, CompensationRefusedError, type CompensationResult } from '../app/compensation.js';
import { DataDir, FolderConfigPath, parseCommand, UsageError, type Command, type CommandSpec } from './args.js';
import { configForFolder, DataFolderError, openDataFolder } from './data-folder.js';
import { loadConfig } from '../config/load.js';

const Flags = z.object({
  reason: visibleText('--reason', {
    max: 500,
    min: 3,
    required: 'give --reason: why this write is undone (it goes into the audit trail)',
  }).meta({ value: 'why', description: 'why this write is undone (goes into the audit trail)' }),
  'requested-by': RequestedByFlag,
  config: FolderConfigPath,
  'data-dir': DataDir.optional().meta({
    value: 'dir',
    description: 'the local data folder (default .paperclip): attach to the Paperclip process holding it, or start the stack on it here',
  }),
  aws: z
    .boolean()
    .default(false)
    .meta({ description: 'start the inverse on AWS: PAPERCLIP_GUARDED_WRITE_ARN and AWS credentials from the environment' }),
});

const Key = z.string().regex(KEY_PATTERN, `${KEY_SHAPE} (from the audit trail or the evidence folder)`);

export const COMPENSATE_SPEC: CommandSpec<typeof Flags> = {
  name: 'compensate',
  summary: 'undoes one write through its registered inverse, verified by readback',
  description: `Undoes one write through its registered inverse: the inverse runs as its own
guarded write (claim, evidence, independent readback), and the write counts as
rolled back only when that readback shows the registered pre-state. The audit
trail of <key> records compensation_started and compensated / compensation_failed.
Irreversible actions (e.g. refund) have no inverse and are refused.

Locally it works on a data folder (--data-dir, default .paperclip): through the
Paperclip process that holds it (npm start -- --keep, paperclip run --keep), or,
when none does, by starting the embedded stack on it here, with the inverse
driven against the config's vendor.base_url (the config the folder was run with
when --config is left out). Nothing from another process's environment is
needed. With --aws (or with PAPERCLIP_GUARDED_WRITE_ARN set and no --data-dir)
it starts the inverse on AWS instead: the guarded-write state machine's ARN in
PAPERCLIP_GUARDED_WRITE_ARN, PAPERCLIP_CONFIG or --config, and AWS credentials
from the usual chain.

Prints one JSON line. Exit code 0: rolled back; 1: the inverse ran but the
pre-state was not confirmed; 2: refused or bad arguments, nothing ran (an
unknown key, an irreversible action, no data folder); 4: a store or AWS could
not be reached (no credentials, a stack that stopped answering).`,
  flags: Flags,
  positionals: [{ name: 'key', description: 'the idempotency key of the write to undo', schema: Key }],
};

/** The operator command itself, with the services it should use. */
export async function compensateWith(
  s: Services,
  input: { key: string; reason: string; requestedBy: string },
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  err: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  let result: CompensationResult;
  try {
    result = await compensate(s, input);
  } catch (error) {
    if (!(error instanceof CompensationRefusedError)) throw error;
    err(`paperclip compensate: refused: ${error.message}`);
    out(JSON.stringify({ compensates: input.key, refused: true, reason: error.message }));
    return 2;
  }
  out(JSON.stringify(result));
  if (!result.rolledBack)
    err(`paperclip compensate: the inverse ended ${result.outcome}; the pre-state was not confirmed. See the audit trail of ${input.key}.`);
  return result.rolledBack ? 0 : 1;
}

export async function runCompensate(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommand(COMPENSATE_SPEC, argv);
  const key = positionals[0]!;
  if (flags.aws && flags['data-dir'])
    throw new UsageError('compensate', [
      { path: '--aws', message: 'pass either --aws or --data-dir: the write is undone on AWS or on a local folder' },
    ]);
  if (flags.aws && !process.env['PAPERCLIP_GUARDED_WRITE_ARN'])
    throw new UsageError('compensate', [
      { path: '--aws', message: "needs PAPERCLIP_GUARDED_WRITE_ARN: the ARN of the deployed stack's guarded-write state machine" },
    ]);
  if (flags.aws || (!flags['data-dir'] && process.env['PAPERCLIP_GUARDED_WRITE_ARN'])) {
    const s = createServices(flags.config ? { ...process.env, PAPERCLIP_CONFIG: flags.config } : process.env);
    const requestedBy = cliRequester(s.config, flags['requested-by'], 'compensate');
    try {
      return await compensateWith(s, { key, reason: flags.reason, requestedBy });
    } finally {
      s.close();
    }
  }
  const dataDir = flags['data-dir'] ?? '.paperclip';
  let session: Awaited<ReturnType<typeof openDataFolder>>;
  try {
    const configPath = configForFolder(dataDir, flags.config);
    session = await openDataFolder({ dataDir, configPath, vendorBaseUrl: loadConfig(configPath).vendor.base_url });
  } catch (error) {
    if (!(error instanceof DataFolderError)) throw error;
    process.stderr.write(`paperclip compensate: ${error.message}\n`);
    return 2;
  }
  try {
    if (session.mode === 'attached') process.stderr.write(`using the running Paperclip on ${session.dataDir}\n`);
    const requestedBy = cliRequester(session.services.config, flags['requested-by'], 'compensate');
    return await compensateWith(session.services, { key, reason: flags.reason, requestedBy });
  } finally {
    await session.close();
  }
}

export const compensateCommand: Command = { spec: COMPENSATE_SPEC, run: runCompensate };
