import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createServices, type WiredServices } from '../composition/services.js';
import type { EmbeddedOptions, EmbeddedPaperclip } from '../../twin/runtime/index.js';
import type { StoredEmail } from '../../twin/aws/index.js';
import { loadConfig } from '../config/load.js';
import { RefusedError } from './args.js';

/**
 * Opening a local data folder (`.paperclip` by default): either start the
 * embedded stack on it, or attach to the process that already runs it.
 *
 * dynalite keeps the folder's LevelDB locked while a stack runs, and a second
 * stack on a locked folder starts but fails every request. So a stack started
 * here records itself in `<dataDir>/stack.json` (pid and endpoints), and a
 * later command that finds a live owner talks to that owner's endpoints
 * instead of starting its own.
 */

const STACK_FILE = 'stack.json';
/** Which config a folder's tables and bucket were made with: kept after the stack stops. */
const FOLDER_FILE = 'folder.json';

const FolderRecord = z.object({ configPath: z.string().min(1), prefix: z.string().min(1), bucket: z.string().min(1) });
type FolderRecord = z.infer<typeof FolderRecord>;

function folderRecord(dataDir: string): FolderRecord | undefined {
  const path = join(resolve(dataDir), FOLDER_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = FolderRecord.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The config the folder was last run with, when that file still exists: what an operator command uses without --config. */
export function recordedConfigPath(dataDir: string): string | undefined {
  const record = folderRecord(dataDir);
  return record && existsSync(record.configPath) ? record.configPath : undefined;
}

/**
 * The config an operator command reads a folder with: --config when given, else the one the folder
 * was run with, else the sample. A --config whose tables or bucket are not the folder's would read
 * another (empty) set of tables and report an empty queue that is not empty, so it is refused.
 */
export function configForFolder(dataDir: string, given: string | undefined, fallback = 'config/paperclip.local.yaml'): string {
  const record = folderRecord(dataDir);
  if (!given) {
    if (record && !existsSync(record.configPath)) {
      // The sample's tables are not this folder's: reading them would show an empty queue that is not empty.
      throw new DataFolderError(
        `the data folder ${resolve(dataDir)} was run with ${record.configPath}, which is gone; pass --config with a config ` +
          `naming prefix "${record.prefix}" and evidence bucket "${record.bucket}"`,
      );
    }
    const recorded = recordedConfigPath(dataDir);
    if (record && recorded) {
      // The file is still there, but it may have been edited since: its tables must still be the folder's.
      const config = loadConfig(recorded);
      if (config.prefix !== record.prefix || config.evidence.bucket !== record.bucket) {
        throw new DataFolderError(
          `the data folder ${resolve(dataDir)} was run with ${record.configPath}, which now names prefix "${config.prefix}" and ` +
            `bucket "${config.evidence.bucket}" instead of the folder's prefix "${record.prefix}" and bucket "${record.bucket}"; ` +
            "pass --config with a config naming the folder's prefix and bucket",
        );
      }
    }
    return resolve(recorded ?? fallback);
  }
  const configPath = resolve(given);
  if (record) {
    const config = loadConfig(configPath);
    if (config.prefix !== record.prefix || config.evidence.bucket !== record.bucket) {
      throw new DataFolderError(
        `${given} names prefix "${config.prefix}" and bucket "${config.evidence.bucket}", but the data folder ${resolve(dataDir)} ` +
          `holds prefix "${record.prefix}" and bucket "${record.bucket}" (made with ${record.configPath}); ` +
          'leave --config out to use that config, or pass the data folder made with this one',
      );
    }
  }
  return configPath;
}

const StackRecord = z.object({
  pid: z.number().int().positive(),
  startedAt: z.string(),
  configPath: z.string().min(1),
  vendorBaseUrl: z.string().url(),
  region: z.string().min(1),
  endpoints: z.object({
    dynamodb: z.string().url(),
    s3: z.string().url(),
    ses: z.string().url(),
    sesInbox: z.string().url(),
    stepfunctions: z.string().url(),
    // Absent in a record written before the local stack had a KMS.
    kms: z.string().url().optional(),
  }),
  arns: z.object({ batch: z.string().startsWith('arn:'), guardedWrite: z.string().startsWith('arn:') }),
});
type StackRecord = z.infer<typeof StackRecord>;

/** The embedded stack's options, with the data folder required: a session is about a folder. */
export interface SessionOptions extends EmbeddedOptions {
  dataDir: string;
}

/** An embedded stack this process started on a data folder. */
export interface EmbeddedSession {
  dataDir: string;
  paperclip: EmbeddedPaperclip;
  services: WiredServices;
  close(): Promise<void>;
}

/** The data folder cannot be opened: missing, or held by another live process. */
export class DataFolderError extends RefusedError {
  override name = 'DataFolderError';
}

function stackFile(dataDir: string): string {
  return join(dataDir, STACK_FILE);
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live stack that owns the folder, if any; a record left by a killed process is ignored. */
export function runningStack(dataDir: string): StackRecord | undefined {
  const path = stackFile(resolve(dataDir));
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = StackRecord.safeParse(raw);
  if (!parsed.success || !alive(parsed.data.pid)) return undefined;
  return parsed.data;
}

/** Starts the embedded stack (no batch) on a data folder that no live process holds. */
export async function startEmbeddedSession(options: SessionOptions): Promise<EmbeddedSession> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const owner = runningStack(dataDir);
  if (owner) {
    throw new DataFolderError(
      `the data folder ${dataDir} is in use by a running Paperclip (pid ${owner.pid}, started ` +
        `${owner.startedAt}); stop it first, or run this command without starting a stack`,
    );
  }
  const configPath = resolve(options.configPath ?? 'config/paperclip.local.yaml');
  // Loaded here, not at the top: the runtime is most of the CLI's modules, and only the commands that start a stack need it.
  const { startEmbeddedPaperclip } = await import('../../twin/runtime/index.js');
  // A folder made before folders recorded their config is not recorded now: the config given here may not be the one
  // its tables were made with (takeover list checks the folder's queues instead); a fresh folder, or one with a
  // record (which configForFolder has matched), is.
  const recordIt = folderRecord(dataDir) !== undefined || !existsSync(join(dataDir, 'dynamodb'));
  const paperclip = await startEmbeddedPaperclip({ ...options, dataDir, configPath });
  const record: StackRecord = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    configPath,
    vendorBaseUrl: options.vendorBaseUrl,
    region: paperclip.services.config.region,
    endpoints: paperclip.stack.endpoints,
    arns: paperclip.arns,
  };
  // Owner-only: the record holds the SES inbox URL with its token.
  writeFileSync(stackFile(dataDir), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(stackFile(dataDir), 0o600); // a file left by an earlier start keeps its old mode otherwise
  const folder: FolderRecord = { configPath, prefix: paperclip.services.config.prefix, bucket: paperclip.services.config.evidence.bucket };
  if (recordIt) writeFileSync(join(dataDir, FOLDER_FILE), `${JSON.stringify(folder, null, 2)}\n`);
  let closing: Promise<void> | undefined;
  return {
    dataDir,
    paperclip,
    services: paperclip.services,
    close() {
      closing ??= (async () => {
        if (runningStack(dataDir)?.pid === process.pid) rmSync(stackFile(dataDir), { force: true });
        await paperclip.stop();
      })();
      return closing;
    },
  };
}

/** What a command needs from a data folder, whichever way it was opened. */
export interface DataFolderSession {
  mode: 'attached' | 'started';
  dataDir: string;
  services: WiredServices;
  vendorBaseUrl: string;
  sesInbox: string;
  fetchEmails(): Promise<StoredEmail[]>;
  close(): Promise<void>;
}

/**
 * Attaches to the live stack that owns the folder, or starts one on it. An
 * attached command's executions run in the owner process (its browser, its
 * vendor); a started one runs them here, against `vendorBaseUrl`.
 */
export async function openDataFolder(options: SessionOptions): Promise<DataFolderSession> {
  const dataDir = resolve(options.dataDir);
  const owner = runningStack(dataDir);
  if (owner) {
    const services = createServices({
      PAPERCLIP_CONFIG: owner.configPath,
      PAPERCLIP_VENDOR_BASE_URL: owner.vendorBaseUrl,
      PAPERCLIP_AWS_REGION: owner.region,
      PAPERCLIP_DYNAMODB_ENDPOINT: owner.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: owner.endpoints.s3,
      PAPERCLIP_SES_ENDPOINT: owner.endpoints.ses,
      PAPERCLIP_SFN_ENDPOINT: owner.endpoints.stepfunctions,
      PAPERCLIP_GUARDED_WRITE_ARN: owner.arns.guardedWrite,
    });
    return {
      mode: 'attached',
      dataDir,
      services,
      vendorBaseUrl: owner.vendorBaseUrl,
      sesInbox: owner.endpoints.sesInbox,
      async fetchEmails() {
        const response = await fetch(`${owner.endpoints.ses.replace(/\/+$/, '')}/store`);
        return ((await response.json()) as { emails: StoredEmail[] }).emails;
      },
      async close() {
        services.close();
      },
    };
  }
  if (!existsSync(dataDir)) {
    throw new DataFolderError(`there is no data folder at ${dataDir}; run npm start (or pass --data-dir) first`);
  }
  const session = await startEmbeddedSession({ ...options, dataDir });
  return {
    mode: 'started',
    dataDir,
    services: session.services,
    vendorBaseUrl: options.vendorBaseUrl,
    sesInbox: session.paperclip.stack.endpoints.sesInbox,
    fetchEmails: () => session.paperclip.stack.fetchEmails(),
    close: () => session.close(),
  };
}
