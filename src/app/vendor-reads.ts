import type { Page } from 'playwright-core';
import { fillTemplate } from '../sitepack/action-language.js';
import type { ReadbackSource, SitePack } from '../sitepack/schema.js';
import { ReadFailedError, StructuredContractMissingError } from '../domain/errors.js';
import type { Observation } from '../domain/readback.js';
import { runStep } from '../browser/executor.js';
import type { OpenedSession } from '../browser/identity-sessions.js';
import type { VendorApi } from '../adapters/vendor/vendor-api.js';

/** One row of the vendor's discrepancy list, as read through the structured contract. */
export interface ListedItem {
  billNo: string;
  status: string;
  kind?: string;
  amount?: string;
}

const statusCode = (pack: SitePack, label: string): string => pack.list.statusLabels[label.trim()] ?? `UNKNOWN:${label.trim()}`;

async function readRows(page: Page, pack: SitePack): Promise<ListedItem[]> {
  const { rowKeyAttribute, fields } = pack.list;
  const names = [fields.key, fields.status, fields.kind ?? '', fields.amount ?? ''];
  // No helper functions inside the page callback: the TypeScript loader would wrap
  // them in a naming shim that does not exist in the page.
  const cells = await page
    .locator(`[${rowKeyAttribute}]`)
    .evaluateAll(
      (rows, [attribute, wanted]) =>
        rows.map((row) => [
          row.getAttribute(attribute as string) ?? '',
          ...(wanted as string[]).map((name) => (name ? (row.querySelector(`[data-field="${name}"]`)?.textContent ?? '').trim() : '')),
        ]),
      [rowKeyAttribute, names] as const,
    );
  const raw = cells.map(([key = '', keyCell, status, kind, amount]) => ({
    key,
    keyCell,
    status,
    kind: kind || undefined,
    amount: amount || undefined,
  }));
  if (raw.length === 0) {
    const looksLikeData = (await page.getByRole('row').count()) > 1;
    if (looksLikeData) {
      throw new StructuredContractMissingError(`the list shows rows but none carries ${rowKeyAttribute}: the vendor changed its layout`, {
        url: page.url(),
      });
    }
  }
  return raw.map((r) => {
    if (r.status === undefined || r.status === '' || r.keyCell !== r.key) {
      throw new StructuredContractMissingError(`row ${r.key} lacks the data-field cells the site pack expects`, { url: page.url() });
    }
    return {
      billNo: r.key,
      status: statusCode(pack, r.status),
      kind: r.kind ? (pack.list.kindLabels[r.kind] ?? r.kind) : undefined,
      amount: r.amount,
    };
  });
}

export interface ReadContext {
  pack: SitePack;
  baseUrl: string;
  tenant: string;
}

/** Reads every page of a tenant's list (bounded by maxPages). */
export async function readList(session: OpenedSession, ctx: ReadContext): Promise<ListedItem[]> {
  const items: ListedItem[] = [];
  const stepCtx = { baseUrl: ctx.baseUrl, params: {}, sessionLost: ctx.pack.sessionLost, traced: session.traced };
  for (let pageNo = 1; pageNo <= ctx.pack.list.maxPages; pageNo++) {
    const url = fillTemplate(ctx.pack.list.url, { tenant: ctx.tenant, page: String(pageNo) }, 'url');
    await runStep(session.page, { action: 'open', url }, stepCtx);
    for (const step of ctx.pack.list.querySteps) await runStep(session.page, step, stepCtx);
    const rows = await readRows(session.page, ctx.pack);
    items.push(...rows);
    const next = ctx.pack.list.nextPage;
    if (rows.length === 0 || !next) break;
    const hasNext = await session.page
      .getByRole(next.role ?? 'link', next.name ? { name: next.name } : {})
      .first()
      .isVisible()
      .catch(() => false);
    if (!hasNext) break;
  }
  return items;
}

function parseCsv(text: string): string[][] {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((line) => line.length > 0)
    .map((line) => line.split(',').map((cell) => cell.replace(/^"|"$/g, '')));
}

export interface ObserveContext extends ReadContext {
  billNo: string;
  session?: OpenedSession;
  api?: VendorApi;
}

/** One observation of an item's status from one independent source. */
export async function observeStatus(source: ReadbackSource, ctx: ObserveContext): Promise<Observation> {
  const at = new Date().toISOString();
  try {
    const status = await readStatus(source, ctx);
    return { source, at, status };
  } catch (error) {
    if (error instanceof StructuredContractMissingError) throw error;
    if ((error as Error).name === 'SessionLostError') throw error;
    return { source, at, error: (error as Error).message };
  }
}

async function readStatus(source: ReadbackSource, ctx: ObserveContext): Promise<string | undefined> {
  const { pack } = ctx;
  if (source === 'api') {
    if (!ctx.api) throw new ReadFailedError('no vendor API for this identity');
    const item = await ctx.api.readItem(ctx.billNo);
    const status = item?.[pack.api?.statusField ?? 'status'];
    return typeof status === 'string' ? status : undefined;
  }
  const session = ctx.session;
  if (!session) throw new ReadFailedError(`readback source ${source} needs a browser session`);
  const stepCtx = { baseUrl: ctx.baseUrl, params: {}, sessionLost: pack.sessionLost, traced: session.traced };
  if (source === 'settlement_file') {
    if (!pack.settlementFile) throw new ReadFailedError('site pack has no settlement file');
    const url = new URL(fillTemplate(pack.settlementFile.url, { tenant: ctx.tenant }, 'url'), ctx.baseUrl);
    const response = await session.context.request.get(url.toString(), { failOnStatusCode: false, maxRedirects: 0 });
    if (response.status() !== 200) throw new ReadFailedError(`settlement file answered ${response.status()}`);
    const [header, ...rows] = parseCsv(await response.text());
    const keyAt = header?.indexOf(pack.settlementFile.keyColumn) ?? -1;
    const statusAt = header?.indexOf(pack.settlementFile.statusColumn) ?? -1;
    if (keyAt < 0 || statusAt < 0) throw new StructuredContractMissingError('settlement file lacks the key or status column');
    return rows.find((r) => r[keyAt] === ctx.billNo)?.[statusAt];
  }
  if (source === 'detail') {
    if (!pack.detail) throw new ReadFailedError('site pack has no detail page');
    await runStep(session.page, { action: 'open', url: fillTemplate(pack.detail.url, { billNo: ctx.billNo }, 'url') }, stepCtx);
    const cell = session.page.locator(`[data-field="${pack.detail.statusField}"]`).first();
    if ((await cell.count()) === 0) throw new StructuredContractMissingError('detail page lacks the status field');
    return statusCode(pack, (await cell.textContent()) ?? '');
  }
  const items = await readList(session, ctx);
  return items.find((i) => i.billNo === ctx.billNo)?.status;
}
