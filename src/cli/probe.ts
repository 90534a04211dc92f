import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Services } from '../app/services.js';
import { createServices } from '../composition/services.js';
import { withSession } from '../app/sessions.js';
import { planRows, type RowPlan } from '../app/batch.js';
import { checkSession, readContextFor, readItem, readList, type ListedItem } from '../browser/vendor-reads.js';
import { browserlessApi } from '../app/ownership.js';
import { runStep } from '../browser/executor.js';
import { closeSharedBrowser, sharedBrowser } from '../browser/chromium.js';
import type { OpenedSession } from '../browser/identity-sessions.js';
import type { ReadbackSource } from '../sitepack/schema.js';
import { ConfigPath, parseCommand, TenantId, UsageError, type Command, type CommandSpec } from './args.js';
import { SessionLostError } from '../domain/errors.js';
import { where } from '../browser/locate.js';

/**
 * `paperclip sitepack probe`: a read-only dry run on the live site. Every
 * vendor call here goes through the same readers the batch and readback use
 * (list read, per-source state read, session check), so what it prints is what
 * a run would see. It opens no write session and runs no action step.
 */

const Flags = z.object({
  config: ConfigPath,
  tenant: TenantId.meta({ value: 'tenant', description: 'a tenant of the config (its identity logs in)' }),
  item: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ value: 'key', description: 'the item whose state is read through every source (default: the first pending row)' }),
  out: z
    .string()
    .min(1)
    .optional()
    .meta({ value: 'dir', description: 'screenshots, traces and probe.json (default .paperclip/probe/<site>-<tenant>-<time>)' }),
  json: z.boolean().default(false).meta({ description: 'print probe.json instead of the table' }),
});

export const PROBE_SPEC: CommandSpec<typeof Flags> = {
  name: 'sitepack probe',
  summary: 'read-only dry run on the live site: rows, what a batch would do, state per readback source',
  description: `Logs in as the tenant's identity at the config's vendor.base_url, reads the whole
list (every page), and prints each parsed row (key, status, kind, fields) with
what a batch would do with it (which action, or why none). Then reads one item's
state through every readback source the pack describes, says whether they
agree, and checks the session-loss detectors: the logged-in page shows no
session-loss signal, and a logged-out visit to login.probeUrl is detected.
Screenshots, the browser traces and probe.json go to --out.

It never writes: no write session, no action step, no claim, no evidence
bucket. Exit code 0 when the list read, the sources agree and the detectors
fire; 1 otherwise (the output says what failed); 2 for bad arguments.`,
  flags: Flags,
};

interface ProbedRow extends ListedItem {
  /** The action a batch would run on the row now, if any, and why (or why none). */
  batch: { action?: string; why: string };
}

interface SourceReading {
  source: ReadbackSource;
  configured: boolean;
  status?: string;
  owner?: string;
  error?: string;
}

export interface ProbeResult {
  site: string;
  baseUrl: string;
  tenant: string;
  identity: string;
  rows: ProbedRow[];
  listError?: string;
  item?: string;
  readings: SourceReading[];
  agree?: boolean;
  sessionLoss: Array<{ check: string; ok: boolean; detail: string }>;
  files: string[];
  ok: boolean;
}

const message = (error: unknown) => `${(error as Error).name}: ${(error as Error).message.split('\n')[0]}`;

/** The readback sources the pack describes, the configured ones first. */
function sourcesOf(s: Services, identity: string): Array<{ source: ReadbackSource; configured: boolean }> {
  const configured = s.config.write_policy.readback_sources;
  const offered: ReadbackSource[] = ['list'];
  if (s.pack.detail) offered.push('detail');
  if (s.pack.export) offered.push('export');
  const credentials = s.identity(identity).credentials;
  const tokenMissing = s.pack.api?.auth === 'token' && credentials.source === 'inline' && !credentials.api_token;
  if (s.pack.api && !tokenMissing) offered.push('api');
  return [...new Set([...configured, ...offered])].map((source) => ({ source, configured: configured.includes(source) }));
}

export async function probe(s: Services, options: { tenant: string; item?: string; out: string }): Promise<ProbeResult> {
  const tenant = s.config.tenants.find((t) => t.id === options.tenant)!;
  const baseUrl = s.config.vendor.base_url;
  const ctx = readContextFor(s, tenant.id);
  const files: string[] = [];
  const save = (name: string, data: Buffer | string | undefined) => {
    if (data === undefined) return;
    writeFileSync(join(options.out, name), data);
    files.push(join(options.out, name));
  };
  const result: ProbeResult = {
    site: s.pack.site,
    baseUrl,
    tenant: tenant.id,
    identity: tenant.identity,
    rows: [],
    readings: [],
    sessionLoss: [],
    files,
    ok: false,
  };

  // 1. The list, as the batch reads it, then the session check on the page it ended on.
  await withSession(s, tenant.identity, 'read', { trace: true, tenant: tenant.id }, async (session) => {
    try {
      const rows = await readList(session, ctx);
      result.rows = planRows(tenant, s.pack, rows).map(({ row, action, why }: RowPlan) => ({
        ...row,
        batch: { ...(action && s.pack.actions[action]?.appliesTo.includes(row.status) ? { action } : {}), why },
      }));
    } catch (error) {
      result.listError = message(error);
    }
    save('list.png', await session.page.screenshot({ fullPage: true }).catch(() => undefined));
    await checkSession(session.page, s.pack).then(
      () =>
        result.sessionLoss.push({
          check: 'logged-in page',
          ok: true,
          detail: `no session-loss signal on ${where(session.page)}`,
        }),
      (error: unknown) => result.sessionLoss.push({ check: 'logged-in page', ok: false, detail: message(error) }),
    );
    save('list-trace.zip', await session.close());
  }).catch((error: unknown) => {
    result.listError ??= message(error);
  });

  // 2. One item's state through every source, in a session of its own (as a readback would).
  const item = options.item ?? result.rows.find((r) => r.batch.action)?.billNo ?? result.rows[0]?.billNo;
  if (item) {
    result.item = item;
    const sources = sourcesOf(s, tenant.identity);
    const api = sources.some((x) => x.source === 'api') ? await browserlessApi(s, tenant.identity).catch(() => undefined) : undefined;
    await withSession(s, tenant.identity, 'readback', { trace: true, tenant: tenant.id }, async (session: OpenedSession) => {
      for (const { source, configured } of sources) {
        try {
          const seen = await readItem(source, { ...ctx, billNo: item, session, ...(api ? { api } : {}) });
          result.readings.push({
            source,
            configured,
            ...(seen.status !== undefined ? { status: seen.status } : { error: 'the item is not there' }),
            ...(seen.owner !== undefined ? { owner: seen.owner } : {}),
          });
        } catch (error) {
          result.readings.push({ source, configured, error: message(error) });
        }
        if (source !== 'api') save(`readback-${source}.png`, await session.page.screenshot({ fullPage: true }).catch(() => undefined));
      }
      save('readback-trace.zip', await session.close());
    }).catch((error: unknown) => result.readings.push({ source: 'list', configured: false, error: message(error) }));
    const statuses = new Set(result.readings.map((r) => r.status ?? `(${r.error})`));
    result.agree = statuses.size === 1 && result.readings.every((r) => r.status !== undefined);
  }

  // 3. A logged-out visit must be noticed as session loss, or a revoked session would time out instead of failing loudly.
  const context = await (await sharedBrowser()).newContext({ locale: 'zh-CN' });
  try {
    const page = await context.newPage();
    const probeUrl = s.pack.login.probeUrl;
    try {
      await runStep(page, { action: 'open', url: probeUrl }, { baseUrl, params: {}, sessionLost: s.pack.sessionLost, traced: false });
      await checkSession(page, s.pack);
      // No page signal: an API probe (a single-page app's) answers 401/403, which a browser shows as a body no signal
      // matches. That answer is how a stored session is checked before each task, so it counts here too.
      const answer = await context.request.get(new URL(probeUrl, baseUrl).toString(), { maxRedirects: 0, failOnStatusCode: false });
      const answered = answer.status() === 401 || answer.status() === 403;
      result.sessionLoss.push({
        check: 'logged-out visit',
        ok: answered,
        detail: answered
          ? `${probeUrl} without a session is detected: login.probeUrl answered ` +
            `${answer.status()}, so a stored session that is gone is noticed before a task uses it`
          : `${probeUrl} without a session showed ${where(page)} ` +
            `and nothing matched sessionLost; add what the vendor shows there (a URL part or a text)`,
      });
    } catch (error) {
      const lost = error instanceof SessionLostError;
      result.sessionLoss.push({
        check: 'logged-out visit',
        ok: lost,
        detail: lost ? `${probeUrl} without a session is detected: ${(error as Error).message.split('\n')[0]}` : message(error),
      });
    }
    save('logged-out.png', await page.screenshot().catch(() => undefined));
  } finally {
    await context.close().catch(() => undefined);
  }

  result.ok = !result.listError && result.rows.length > 0 && result.agree === true && result.sessionLoss.every((c) => c.ok);
  save('probe.json', `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** The probe as a person reads it. */
export function formatProbe(r: ProbeResult): string {
  const lines = [`probe ${r.site} at ${r.baseUrl} as ${r.identity} (tenant ${r.tenant}); read-only`];
  if (r.listError) lines.push(`list        FAILED: ${r.listError}`);
  else
    lines.push(
      `list        ${r.rows.length} row(s)${r.rows.length === 0 ? ': an empty list; if the page shows rows, the pack does not parse them' : ''}`,
    );
  const cells = r.rows.map((row) => {
    const { billNo, status, kind, batch, fields } = row;
    const shown = Object.entries(fields)
      .filter(([name, v]) => v !== undefined && name !== 'status' && name !== 'kind')
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ');
    const decision = batch.action ?? `none: ${batch.why}`;
    return [billNo, status, kind ?? '—', shown || '—', decision];
  });
  if (cells.length > 0) {
    const head = ['KEY', 'STATUS', 'KIND', 'FIELDS', 'A BATCH WOULD RUN'];
    const widths = head.slice(0, 4).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    for (const c of [head, ...cells]) lines.push(`  ${c.map((v, i) => (i < 4 ? v.padEnd(widths[i]!) : v)).join('  ')}`);
  }
  if (r.item) {
    lines.push(`item ${r.item} through every readback source`);
    const width = Math.max(...r.readings.map((x) => x.source.length));
    for (const x of r.readings)
      lines.push(
        `  ${x.source.padEnd(width)}  ${x.status ?? `FAILED: ${x.error}`}${x.configured ? '' : '   (not in write_policy.readback_sources)'}`,
      );
    lines.push(
      `  ${r.agree ? `agree: ${r.readings[0]?.status}` : 'DISAGREE: the sources do not read the same state; fix the pack before any write'}`,
    );
  } else lines.push('item        none: no row to read back');
  lines.push('session loss');
  for (const c of r.sessionLoss) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.check}: ${c.detail}`);
  lines.push(
    `files       ${r.files.length > 0 ? (r.files.find((f) => f.endsWith('probe.json'))?.replace(/probe\.json$/, '') ?? '') : '—'}`,
  );
  lines.push(r.ok ? 'probe ok: nothing was written' : 'probe found problems (above); nothing was written');
  return lines.join('\n');
}

export async function runProbe(argv: string[]): Promise<number> {
  const { flags } = parseCommand(PROBE_SPEC, argv);
  // No stack and no tables: the probe's one session at a time is capped within this process.
  const s = createServices({ PAPERCLIP_CONFIG: resolve(flags.config) }, { sessionSlots: 'in-process' });
  if (!s.config.tenants.some((t) => t.id === flags.tenant)) {
    throw new UsageError('sitepack probe', [
      {
        path: '--tenant',
        message: `"${flags.tenant}" is not a tenant of ${flags.config}; its tenants: ${s.config.tenants.map((t) => t.id).join(', ')}`,
      },
    ]);
  }
  if (flags.item && !new RegExp(s.pack.itemKeyPattern).test(flags.item)) {
    throw new UsageError('sitepack probe', [
      {
        path: '--item',
        message: `${JSON.stringify(flags.item)} is not an item key of ${s.pack.site} (itemKeyPattern ${s.pack.itemKeyPattern})`,
      },
    ]);
  }
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const out = resolve(flags.out ?? join('.paperclip', 'probe', `${s.pack.site}-${flags.tenant}-${stamp}`));
  mkdirSync(out, { recursive: true });
  try {
    const result = await probe(s, { tenant: flags.tenant, out, ...(flags.item ? { item: flags.item } : {}) });
    process.stdout.write(`${flags.json ? JSON.stringify(result) : formatProbe(result)}\n`);
    return result.ok ? 0 : 1;
  } finally {
    await s.sessions.closeIdle();
    await closeSharedBrowser();
  }
}

export const probeCommand: Command = { spec: PROBE_SPEC, run: runProbe };
