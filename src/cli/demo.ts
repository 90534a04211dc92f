import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../simulator/server.js';
import { startEmbeddedPaperclip, type EmbeddedPaperclip } from '../embedded/paperclip-stack.js';
import type { BatchSummary } from '../app/batch.js';
import { loadConfig } from '../config/load.js';
import { approvalsStore } from '../app/approvals/request-approval.js';
import { parseFlags } from './args.js';
import { createProgressRenderer } from './progress.js';
import { startEmbeddedSession } from './embedded-session.js';
import { setTimeout as sleep } from 'node:timers/promises';

const Flags = z.object({
  tenant: z
    .string()
    .regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case')
    .default('acme'),
  'data-dir': z.string().min(1).default('.paperclip'),
  keep: z.boolean().default(false),
  'sim-port': z.coerce.number().int().min(0).max(65535).default(4100),
  seed: z.coerce.number().int().min(0).default(1),
  config: z.string().min(1).default('config/paperclip.local.yaml'),
  'approval-port': z.coerce.number().int().min(0).max(65535).optional(),
});

export const DEMO_USAGE = `Usage: npm start -- [--tenant acme] [--keep] [--data-dir .paperclip] [--sim-port 4100] [--seed 1]
                    [--approval-port <port of approvals.base_url>]

Starts the vendor simulator and Paperclip on the embedded local stack, runs one
batch for the tenant and prints one JSON summary line. Irreversible items wait
for an approval: their links are in the local SES inbox (and printed). --keep
leaves everything running, so approving in the browser executes the item
(Ctrl-C to stop).`;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The flat summary line: task, read, then one count per outcome. */
export function summaryLine(summary: BatchSummary): string {
  return JSON.stringify({
    task: summary.task,
    tenant: summary.tenant,
    read: summary.read,
    ...summary.counts,
    ...(summary.error ? { error: summary.error } : {}),
  });
}

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
  const sim = await startSimulator({ port: options.simPort, seed: options.seed, controlToken: undefined }).catch(() =>
    startSimulator({ port: 0, seed: options.seed }),
  );
  const tenant = options.tenant ?? 'acme';
  log(`vendor simulator   ${sim.url}  (login svc-recon-${tenant} / pw-${tenant}-2026)`);
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
  const { endpoints } = paperclip.stack;
  log(`local stack        dynamodb ${endpoints.dynamodb}  s3 ${endpoints.s3}  stepfunctions ${endpoints.stepfunctions}`);
  log(`approval emails    ${endpoints.sesInbox}`);
  log(`approval pages     ${paperclip.approvals.url}`);
  if (options.dataDir) log(`data folder        ${options.dataDir}`);
  return {
    sim,
    paperclip,
    async stop() {
      await session.close();
      await sim.close();
    },
  };
}

/**
 * The approval links of a task's items that wait for a person, read from the
 * local SES inbox. Those items run on in the background, so this waits a
 * bounded time for their mail to be sent.
 */
async function approvalLinks(
  paperclip: EmbeddedPaperclip,
  taskId: string,
  expected: number,
  timeoutMs: number,
): Promise<Array<{ billNo: string; to: string; link: string }>> {
  const s = paperclip.services;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const claims = (await s.claims.byTask(taskId)).filter((c) => s.config.write_policy.approval_required.includes(c.action));
    const requests = (await Promise.all(claims.map((c) => approvalsStore(s).byKey(c.key)))).flat();
    if (requests.length >= expected || Date.now() > deadline) {
      const emails = await paperclip.stack.fetchEmails();
      return requests.flatMap((r) =>
        emails.flatMap((mail) => {
          const link = mail.body.text?.match(/https?:\/\/\S+\/approvals\/\S+/)?.[0];
          return link?.includes(r.approvalId) ? mail.destination.to.map((to) => ({ billNo: r.billNo, to, link })) : [];
        }),
      );
    }
    await sleep(500);
  }
}

/** With --keep: reports each waiting item once it is decided and finished, until the process stops. */
function reportDecidedItems(paperclip: EmbeddedPaperclip, taskId: string): () => void {
  const s = paperclip.services;
  const reported = new Set<string>();
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const claims = await s.claims.byTask(taskId).catch(() => []);
      for (const c of claims) {
        if (!s.config.write_policy.approval_required.includes(c.action) || reported.has(c.key)) continue;
        if (['DONE', 'REJECTED', 'EXPIRED', 'TAKEOVER', 'STALE', 'FAILED'].includes(c.status)) {
          reported.add(c.key);
          log(`${c.billNo} ${c.action}: ${c.status.toLowerCase()}${c.reason ? ` (${c.reason})` : ''}`);
        }
      }
      await sleep(1000);
    }
  })();
  return () => {
    stopped = true;
  };
}

export async function runDemo(argv: string[]): Promise<number> {
  const { flags } = parseFlags(
    argv,
    {
      tenant: { type: 'string' },
      'data-dir': { type: 'string' },
      keep: { type: 'boolean' },
      'sim-port': { type: 'string' },
      seed: { type: 'string' },
      config: { type: 'string' },
      'approval-port': { type: 'string' },
    },
    Flags,
    'demo',
  );
  const dataDir = resolve(flags['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  const began = Date.now();
  const env = await startLocalEnvironment({
    simPort: flags['sim-port'],
    seed: flags.seed,
    config: flags.config,
    dataDir,
    tenant: flags.tenant,
    ...(flags['approval-port'] !== undefined ? { approvalPort: flags['approval-port'] } : {}),
  });
  const { paperclip } = env;
  const { endpoints } = paperclip.stack;
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const taskId = `T-${stamp}-${flags.tenant}`;
  log(`batch ${taskId}: reading the ${flags.tenant} discrepancy list, then one guarded write per pending item`);
  const progress = createProgressRenderer();
  const run = await paperclip.runBatch({ taskId, tenant: flags.tenant, requestedBy: 'demo' }, (p) => progress.update(p));
  progress.finish();
  log(
    `batch ${run.status.toLowerCase()} in ${((Date.now() - began) / 1000).toFixed(1)} s; evidence under s3://${paperclip.services.config.evidence.bucket}/evidence/${flags.tenant}/${taskId}/`,
  );
  log(
    `evidence pages     npm run paperclip -- evidence --data-dir ${flags['data-dir']}  then open /evidence/${flags.tenant}/${taskId}/index.html`,
  );
  log(`verify and report  npm run paperclip -- audit verify --batch ${flags.tenant}/${taskId}  ·  npm run paperclip -- report --since 24h`);
  const awaiting = run.summary?.counts.awaiting_approval ?? 0;
  if (awaiting > 0) {
    log(`${awaiting} irreversible item(s) await approval: the emails are in ${endpoints.sesInbox}`);
    for (const { billNo, to, link } of await approvalLinks(paperclip, taskId, awaiting, 90_000)) log(`  ${billNo} → ${to}: ${link}`);
    log(
      flags.keep
        ? '  approve in a browser and the item runs here, in the background'
        : '  (rerun with --keep to approve them: the approval pages live as long as this process)',
    );
  }
  if (run.summary) process.stdout.write(`${summaryLine(run.summary)}\n`);
  else process.stdout.write(`${JSON.stringify({ task: taskId, error: run.error ?? run.status })}\n`);
  if (flags.keep) {
    log(
      `operator commands against this stack (e.g. paperclip compensate <key> --reason ...) need: PAPERCLIP_CONFIG=${flags.config} ` +
        `PAPERCLIP_VENDOR_BASE_URL=${env.sim.url} PAPERCLIP_DYNAMODB_ENDPOINT=${endpoints.dynamodb} PAPERCLIP_S3_ENDPOINT=${endpoints.s3} ` +
        `PAPERCLIP_SES_ENDPOINT=${endpoints.ses} PAPERCLIP_SFN_ENDPOINT=${endpoints.stepfunctions} PAPERCLIP_GUARDED_WRITE_ARN=${paperclip.arns.guardedWrite}`,
    );
    log('everything stays up; press Ctrl-C to stop');
    const stopReporting = reportDecidedItems(paperclip, taskId);
    await new Promise<void>((r) => process.once('SIGINT', () => r()));
    stopReporting();
  }
  await env.stop();
  return run.status === 'SUCCEEDED' && !run.summary?.error ? 0 : 1;
}
