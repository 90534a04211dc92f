import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { startSimulator } from '../simulator/server.js';
import { startEmbeddedPaperclip, type BatchProgress } from '../embedded/paperclip-stack.js';
import type { BatchSummary } from '../app/batch.js';
import { parseFlags } from './args.js';

const Flags = z.object({
  tenant: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case').default('acme'),
  'data-dir': z.string().min(1).default('.paperclip'),
  keep: z.boolean().default(false),
  'sim-port': z.coerce.number().int().min(0).max(65535).default(4100),
  seed: z.coerce.number().int().min(0).default(1),
  config: z.string().min(1).default('config/paperclip.local.yaml'),
});

export const DEMO_USAGE = `Usage: npm start -- [--tenant acme] [--keep] [--data-dir .paperclip] [--sim-port 4100] [--seed 1]

Starts the vendor simulator and Paperclip on the embedded local stack, runs one
batch for the tenant and prints one JSON summary line. --keep leaves everything
running for browsing (Ctrl-C to stop).`;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function progressLine(p: BatchProgress): string {
  const parts = Object.entries(p.byStatus)
    .sort()
    .map(([status, n]) => `${status.toLowerCase()} ${n}`);
  return `  … ${p.claimed} claimed${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** The flat summary line: task, read, then one count per outcome. */
export function summaryLine(summary: BatchSummary): string {
  return JSON.stringify({ task: summary.task, tenant: summary.tenant, read: summary.read, ...summary.counts, ...(summary.error ? { error: summary.error } : {}) });
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
    },
    Flags,
    'demo',
  );
  const dataDir = resolve(flags['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  const began = Date.now();
  const sim = await startSimulator({ port: flags['sim-port'], seed: flags.seed, controlToken: undefined }).catch(() =>
    startSimulator({ port: 0, seed: flags.seed }),
  );
  log(`vendor simulator   ${sim.url}  (login svc-recon-${flags.tenant} / pw-${flags.tenant}-2026)`);
  const paperclip = await startEmbeddedPaperclip({ vendorBaseUrl: sim.url, dataDir, configPath: flags.config });
  const { endpoints } = paperclip.stack;
  log(`local stack        dynamodb ${endpoints.dynamodb}  s3 ${endpoints.s3}  stepfunctions ${endpoints.stepfunctions}`);
  log(`approval emails    ${endpoints.sesInbox}`);
  log(`data folder        ${dataDir}`);
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const taskId = `T-${stamp}-${flags.tenant}`;
  log(`batch ${taskId}: reading the ${flags.tenant} discrepancy list, then one guarded write per pending item`);
  let last = '';
  const run = await paperclip.runBatch({ taskId, tenant: flags.tenant, requestedBy: 'demo' }, (p) => {
    const line = progressLine(p);
    if (line !== last) log(line);
    last = line;
  });
  log(`batch ${run.status.toLowerCase()} in ${((Date.now() - began) / 1000).toFixed(1)} s; evidence under s3://${paperclip.services.config.evidence.bucket}/evidence/${flags.tenant}/${taskId}/`);
  if (run.summary && run.summary.counts.awaiting_approval > 0) {
    log(`${run.summary.counts.awaiting_approval} irreversible item(s) await approval: the emails are in ${endpoints.sesInbox}`);
  }
  if (run.summary) process.stdout.write(`${summaryLine(run.summary)}\n`);
  else process.stdout.write(`${JSON.stringify({ task: taskId, error: run.error ?? run.status })}\n`);
  if (flags.keep) {
    log('everything stays up; press Ctrl-C to stop');
    await new Promise<void>((r) => process.once('SIGINT', () => r()));
  }
  await paperclip.stop();
  await sim.close();
  return run.status === 'SUCCEEDED' && !run.summary?.error ? 0 : 1;
}
