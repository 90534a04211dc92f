import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { RunningSimulator } from '../../backoffices/simulator/index.js';
import type { EmbeddedPaperclip } from '../../twin/runtime/index.js';
import { loadConfig } from '../config/load.js';
import { ConfigPath, DataDir, FailOn, parseCommand, Port, TenantId, type Command, type CommandSpec } from './args.js';
import { log, logStack, newTaskId, runBatchCommand } from './batch-output.js';
import { startEmbeddedSession } from './data-folder.js';

const Flags = z.object({
  tenant: TenantId.default('acme').meta({ value: 'tenant', description: 'the tenant whose list the batch works through' }),
  'data-dir': DataDir.default('.paperclip'),
  keep: z.boolean().default(false).meta({ description: 'leave everything running (approve in a browser; Ctrl-C to stop)' }),
  'fail-on': FailOn,
  'sim-port': Port.default(4100).meta({ value: 'port', description: 'preferred simulator port (a taken port falls back to a free one)' }),
  seed: z.coerce.number().int().min(0).default(1).meta({ value: 'n', description: "the simulator's data seed" }),
  config: ConfigPath.default('config/paperclip.local.yaml'),
  'approval-port': Port.optional().meta({ value: 'port', description: 'port of the approval pages (default: that of approvals.base_url)' }),
});

export const DEMO_SPEC: CommandSpec<typeof Flags> = {
  name: 'demo',
  invocation: 'npm start --',
  summary: 'the zero-config demo: starts the vendor simulator and runs one batch against it',
  description: `Starts the vendor simulator and Paperclip on the embedded local stack, runs one
batch for the tenant and prints one JSON summary line. Irreversible items wait
for an approval: their links are in the local SES inbox (and printed). --keep
leaves everything running, so approving in the browser executes the item
(Ctrl-C to stop). To run against another back office, use paperclip run.`,
  flags: Flags,
};

export interface LocalEnvironment {
  sim: RunningSimulator;
  paperclip: EmbeddedPaperclip;
  stop(): Promise<void>;
}

/**
 * The vendor simulator plus Paperclip on the embedded stack, as npm start runs
 * them, with one line per address. Preferred ports that are taken fall back to
 * free ones; approval links follow the approval server's actual address.
 */
export async function startLocalEnvironment(options: {
  simPort: number;
  seed: number;
  config: string;
  dataDir?: string;
  approvalPort?: number;
  tenant?: string;
}): Promise<LocalEnvironment> {
  // Loaded when the demo starts, not with every command: the simulator and the runtime are most of the CLI's modules.
  const [{ startSimulator }, { startEmbeddedPaperclip }] = await Promise.all([
    import('../../backoffices/simulator/index.js'),
    import('../../twin/runtime/index.js'),
  ]);
  const sim = await startSimulator({ port: options.simPort, seed: options.seed, controlToken: undefined }).catch(() =>
    startSimulator({ port: 0, seed: options.seed }),
  );
  const tenant = options.tenant ?? 'acme';
  log(`vendor simulator   ${sim.url}  (sign in as svc-recon-${tenant}; the seeded passwords are in docs/simulator.md)`);
  const approvalPort = options.approvalPort ?? Number(new URL(loadConfig(options.config).approvals.base_url).port || 0);
  // On a data folder the stack records itself there, so paperclip takeover (and the like) can work through it while it runs.
  const start = (port: number): Promise<{ paperclip: EmbeddedPaperclip; close(): Promise<void> }> =>
    options.dataDir
      ? startEmbeddedSession({ vendorBaseUrl: sim.url, configPath: options.config, approvalPort: port, dataDir: options.dataDir })
      : startEmbeddedPaperclip({ vendorBaseUrl: sim.url, configPath: options.config, approvalPort: port }).then((paperclip) => ({
          paperclip,
          close: () => paperclip.stop(),
        }));
  let session: { paperclip: EmbeddedPaperclip; close(): Promise<void> };
  try {
    session = await start(approvalPort).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE' || approvalPort === 0) throw error;
      return start(0);
    });
  } catch (error) {
    await sim.close();
    throw error;
  }
  const { paperclip } = session;
  logStack(paperclip, options.dataDir);
  return {
    sim,
    paperclip,
    async stop() {
      await session.close();
      await sim.close();
    },
  };
}

export async function runDemo(argv: string[]): Promise<number> {
  const { flags } = parseCommand(DEMO_SPEC, argv);
  const dataDir = resolve(flags['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  const env = await startLocalEnvironment({
    simPort: flags['sim-port'],
    seed: flags.seed,
    config: flags.config,
    dataDir,
    tenant: flags.tenant,
    ...(flags['approval-port'] !== undefined ? { approvalPort: flags['approval-port'] } : {}),
  });
  try {
    return await runBatchCommand(env.paperclip, {
      tenant: flags.tenant,
      taskId: newTaskId(flags.tenant),
      requestedBy: 'demo',
      keep: flags.keep,
      failOn: flags['fail-on'],
      dataDirLabel: flags['data-dir'],
    });
  } finally {
    await env.stop();
  }
}

export const demoCommand: Command = { spec: DEMO_SPEC, run: runDemo };
