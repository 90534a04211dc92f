import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DataSourceError, openDataSource } from '../evidence/data-source.js';
import { buildReport } from '../report/collect.js';
import { renderReportHtml } from '../report/render-html.js';
import { renderReportText } from '../report/render-text.js';
import { parseSince } from '../report/window.js';
import { parseFlags } from './args.js';

export const REPORT_USAGE = `Usage: paperclip report [--since <ISO date | 90m | 24h | 7d | 2w>] [--tenant <tenant>] [--html <out.html>] [--json]
                       [--data-dir .paperclip] [--config config/paperclip.local.yaml] [--aws]

Counts and rates of the four metrics (misoperation, task completion, human
takeover, rollback success) and the outcome breakdown, over the claims whose
updatedAt falls in the window (default: the last 7 days), with the batch
summaries finished in it. --html also writes a page with charts (no script,
nothing loaded from the network). Definitions: docs/report.md.`;

const Flags = z.object({
  since: z.string().min(1).default('7d'),
  tenant: z
    .string()
    .regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case')
    .optional(),
  html: z.string().min(1).optional(),
  json: z.boolean().default(false),
  'data-dir': z.string().min(1).default('.paperclip'),
  config: z.string().min(1).default('config/paperclip.local.yaml'),
  aws: z.boolean().default(false),
});

export async function runReport(argv: string[]): Promise<number> {
  const { flags } = parseFlags(
    argv,
    {
      since: { type: 'string' },
      tenant: { type: 'string' },
      html: { type: 'string' },
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      aws: { type: 'boolean' },
    },
    Flags,
    'report',
  );
  let since: Date;
  try {
    since = parseSince(flags.since);
  } catch (error) {
    process.stderr.write(`paperclip report: --since: ${(error as Error).message}\n`);
    return 2;
  }
  let source: Awaited<ReturnType<typeof openDataSource>>;
  try {
    source = await openDataSource({ dataDir: flags['data-dir'], configPath: flags.config, aws: flags.aws });
  } catch (error) {
    if (!(error instanceof DataSourceError)) throw error;
    process.stderr.write(`paperclip report: ${error.message}\n`);
    return 2;
  }
  try {
    const report = await buildReport(source.services, { since, ...(flags.tenant ? { tenant: flags.tenant } : {}) });
    process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : `${renderReportText(report)}\n`);
    if (flags.html) {
      const out = resolve(flags.html);
      writeFileSync(out, renderReportHtml(report));
      process.stderr.write(`report page written to ${out}\n`);
    }
    return 0;
  } finally {
    await source.close();
  }
}
