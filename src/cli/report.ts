import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DataSourceError, openDataSource } from './data-source.js';
import { buildReport } from '../report/collect.js';
import { renderReportHtml } from '../report/render-html.js';
import { renderReportText } from '../report/render-text.js';
import { parseSince } from '../report/window.js';
import { parseCommand, TenantId, type Command, type CommandSpec, dataFolderFlags, AwsFlag } from './args.js';

const Flags = z.object({
  since: z.string().min(1).default('7d').meta({ value: 'ISO date | 90m | 24h | 7d | 2w', description: 'the window' }),
  tenant: TenantId.optional().meta({ value: 'tenant', description: 'only this tenant' }),
  html: z.string().min(1).optional().meta({ value: 'out.html', description: 'also write a page with charts' }),
  json: z.boolean().default(false).meta({ description: 'print the report as JSON' }),
  ...dataFolderFlags,
  aws: AwsFlag,
});

export const REPORT_SPEC: CommandSpec<typeof Flags> = {
  name: 'report',
  summary: 'misoperation, completion, takeover and rollback rates over a time window',
  description: `Counts and rates of the four metrics (misoperation, task completion, human
takeover, rollback success) and the outcome breakdown, over the claims whose
updatedAt falls in the window (default: the last 7 days), with the batch
summaries finished in it. --html also writes a page with charts (no script,
nothing loaded from the network). Definitions: docs/report.md.`,
  flags: Flags,
};

export async function runReport(argv: string[]): Promise<number> {
  const { flags } = parseCommand(REPORT_SPEC, argv);
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

export const reportCommand: Command = { spec: REPORT_SPEC, run: runReport };
