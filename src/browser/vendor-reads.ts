import type { Page } from 'playwright-core';
import { fillTemplate, describeLocator, type FrameSelector, type Step } from '../sitepack/action-language.js';
import { figureSource, type FieldSource, type ReadbackSource, type SitePack } from '../sitepack/schema.js';
import { ListIncompleteError, ReadFailedError, SessionLostError, StructuredContractMissingError } from '../domain/errors.js';
import type { Observation } from '../domain/readback.js';
import { assertSessionAlive, runSteps, type StepContext } from './executor.js';
import { resolveLocator, where } from './locate.js';
import { LoadMoreButton } from './load-more.js';
import { surfaceOf, topPage, type Surface } from './frames.js';
import {
  countRows,
  describeField,
  drawsPartly,
  findRows,
  scrollTable,
  firstRow,
  labelsOf,
  pageField,
  rowField,
  readTableQuietly,
  type RowSet,
} from './page-reading.js';
import type { OpenedSession } from './identity-sessions.js';
import type { VendorApiPort as VendorApi } from '../app/ports/vendor-api.js';
import { ExportFormatError, parseExport } from '../lib/export-file.js';
import { own } from '../lib/own.js';
import { sessionGet } from './rate-limits.js';
import { deadline, pollUntil } from '../lib/deadline.js';

/**
 * The read side of a site pack, as plain functions over a browser session: the
 * list, one item's state from each readback source, the owner of an item, and
 * the session check. The batch, the guarded write and `sitepack probe` all read
 * through these, so what probe shows is what a run will see.
 */

/** One row of the vendor's list, read as the pack says. */
export interface ListedItem {
  billNo: string;
  /** Status code through `statuses` (UNKNOWN:<text> when the text is not in the map). */
  status: string;
  kind?: string;
  amount?: string;
  owner?: string;
  /** Every field the pack's list declares, as shown. */
  fields: Record<string, string>;
}

export interface ReadContext {
  pack: SitePack;
  baseUrl: string;
  tenant: string;
  /** The tenant's site_params from the config (an org name, an account id...), filled into steps as {{name}}. */
  siteParams?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Parameters every read step gets: the tenant, its site params, and extras (page, billNo). */
export function readParams(ctx: ReadContext, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(ctx.siteParams ?? {}), tenant: ctx.tenant, ...extra };
}

function stepContext(session: OpenedSession, ctx: ReadContext, params: Record<string, string>, frame?: FrameSelector): StepContext {
  return {
    baseUrl: ctx.baseUrl,
    params,
    sessionLost: ctx.pack.sessionLost,
    traced: session.traced,
    timeoutMs: ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(frame ? { frame } : {}),
  };
}

/**
 * Text -> code through a map: the exact text, a text that already is a code, or
 * the longest mapped text the shown text contains ("状态：待处理 (2)").
 */
export function mapStatus(map: Readonly<Record<string, string>>, shown: string): string {
  const text = shown.replace(/\s+/g, ' ').trim();
  const exact = own(map, text);
  if (exact !== undefined) return exact;
  if (Object.values(map).includes(text)) return text;
  const contained = Object.keys(map)
    .filter((label) => text.includes(label))
    .sort((a, b) => b.length - a.length)[0];
  return contained === undefined ? `UNKNOWN:${text}` : (own(map, contained) as string);
}

async function runReadSteps(
  session: OpenedSession,
  ctx: ReadContext,
  steps: readonly Step[],
  params: Record<string, string>,
  frame?: FrameSelector,
) {
  return runSteps(session.page, steps, stepContext(session, ctx, params, frame));
}

/** Where the list is read: its frame (list.frame), found again each time (paging may reload it), or the page. */
function listSurface(session: OpenedSession, ctx: ReadContext): Promise<Surface> {
  return surfaceOf(session.page, ctx.pack.list.frame, ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

/**
 * Waits until the list shows rows or its empty marker (a single-page app renders
 * after load), then reads every visible row. Rows that cannot be parsed, a row
 * without a key, or a page with neither rows nor the empty marker are errors
 * naming the locator: a list read never quietly returns nothing.
 */
async function readRowsOnPage(page: Surface, ctx: ReadContext): Promise<ListedItem[]> {
  return (await readRowSet(page, ctx)).items;
}

async function readRowSet(page: Surface, ctx: ReadContext): Promise<{ items: ListedItem[]; set?: RowSet }> {
  const quick = await readTableRowsQuietly(page, ctx).catch(() => undefined);
  if (quick) {
    await assertSessionAlive(topPage(page), ctx.pack.sessionLost);
    return { items: await listedItems(page, ctx, quick), set: quick };
  }
  const { list } = ctx.pack;
  const timeout = ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const first = firstRow(page, list.rows);
  const emptyMarker = list.empty ? resolveLocator(page, list.empty, {}).first() : undefined;
  const shown = await (emptyMarker ? first.or(emptyMarker) : first)
    .first()
    .waitFor({ state: 'visible', timeout })
    .then(() => true)
    .catch(() => false);
  await assertSessionAlive(topPage(page), ctx.pack.sessionLost);
  if (emptyMarker && (await emptyMarker.isVisible().catch(() => false))) return { items: [] };
  const sources = [list.key, ...Object.values(list.fields)];
  const set = await findRows(page, list.rows, labelsOf(sources));
  if (!shown || set.rows.length === 0) {
    throw new StructuredContractMissingError(
      `list.rows (${set.describe}) found no row on ${where(page)}${
        list.empty ? `, and list.empty (${describeLocator(list.empty)}) is not shown` : '; declare list.empty if the list can be empty'
      }`,
      { rows: set.describe, url: page.url() },
    );
  }
  return { items: await listedItems(page, ctx, set), set };
}

/**
 * A table list that already shows rows, read in one evaluation in an isolated world (quiet-page.ts) rather than
 * through Playwright's locators, whose first use on every page injects Playwright's script. Undefined when only
 * the locators can read it: rows that are not a table, a field read by locator, or no row shown yet (the locator
 * path waits for rows or the empty marker).
 */
async function readTableRowsQuietly(page: Surface, ctx: ReadContext): Promise<RowSet | undefined> {
  const { list } = ctx.pack;
  const sources = [list.key, ...Object.values(list.fields)];
  if (sources.some((source) => source.locator)) return undefined;
  const read = await readTableQuietly(page, list.rows, labelsOf(sources));
  return read && read.rows.length > 0 ? read : undefined;
}

async function listedItems(page: Surface, ctx: ReadContext, set: RowSet): Promise<ListedItem[]> {
  const { list } = ctx.pack;
  const items: ListedItem[] = [];
  for (const [n, row] of set.rows.entries()) {
    const key = await rowField(set, row, list.key);
    if (key === undefined) throw rowError(page, set, n, row.text, 'list.key', list.key);
    const fields: Record<string, string> = {};
    for (const [name, source] of Object.entries(list.fields)) {
      const value = await rowField(set, row, source);
      if (value !== undefined) fields[name] = value;
      else if (name === 'status') throw rowError(page, set, n, row.text, 'list.fields.status', source);
    }
    items.push({
      billNo: key,
      status: mapStatus(ctx.pack.statuses, fields['status'] ?? ''),
      kind: fields['kind'] === undefined ? undefined : (own(ctx.pack.kinds, fields['kind']) ?? fields['kind']),
      amount: fields['amount'],
      owner: fields['owner'],
      fields,
    });
  }
  return items;
}

function rowError(page: Surface, set: RowSet, n: number, text: string, field: string, source: FieldSource): StructuredContractMissingError {
  const byColumn = source.column !== undefined;
  const headers =
    set.headers.length > 0
      ? `; the columns are ${set.headers.map((h) => JSON.stringify(h)).join(', ')}`
      : byColumn
        ? '; no header row was found (a header row is a row in <thead>, or one of <th> or role=columnheader cells)'
        : '';
  return new StructuredContractMissingError(
    `${field} (${describeField(source)}) read nothing in row ${n + 1} of ${set.describe} on ${where(page)} (row text: ${JSON.stringify(
      text.slice(0, 100),
    )})${headers}`,
    { field, rows: set.describe, url: page.url() },
  );
}

/** Reads every page of a tenant's list (bounded by maxPages), following the pack's paging. */
export async function readList(
  session: OpenedSession,
  ctx: ReadContext,
  /** Stop after the first page whose rows satisfy this (a search for one item), instead of reading every page. */
  enough?: (rows: ListedItem[]) => boolean,
): Promise<ListedItem[]> {
  const { list } = ctx.pack;
  const paging = list.paging;
  const byKey = new Map<string, ListedItem>();
  const add = (rows: ListedItem[]) => {
    let added = 0;
    for (const row of rows) {
      if (!byKey.has(row.billNo)) added += 1;
      byKey.set(row.billNo, row);
    }
    return added;
  };
  await runReadSteps(session, ctx, list.steps, readParams(ctx, { page: '1' }), list.frame);
  if (paging?.loadMore) {
    const page = await listSurface(session, ctx);
    // Each press is judged by counting the rows (one evaluation that returns a number), and the rows are read
    // once, after the last press: reading every row shown after each press read a list of n rows n²/page-size
    // times (10,000 rows in 100 presses: half a million rows read, parsed and sent over DevTools).
    // Found once and pressed as an element: resolving the role locator on every check walks the grown list (load-more.ts).
    const more = new LoadMoreButton(resolveLocator(page, paging.loadMore, {}).first());
    // A list drawn after load shows nothing yet: wait for its rows (or its empty marker) as a read does.
    let shown = await countRows(page, list.rows).catch(() => 0);
    if (shown === 0 && (await readRowsOnPage(page, ctx)).length > 0) shown = await countRows(page, list.rows).catch(() => 0);
    let pressed = 1;
    for (; pressed < list.maxPages; pressed++) {
      if (!(await more.usable())) break;
      const before = shown;
      await more.press();
      // A list that redraws while it loads shows no rows for a moment: only the deadline makes that a failure.
      await waitUntil(
        async () => {
          shown = await countRows(page, list.rows).catch(() => 0);
          return shown > before;
        },
        ctx,
        async () => {
          await assertSessionAlive(topPage(page), ctx.pack.sessionLost);
          throw new StructuredContractMissingError(
            `list.paging.loadMore (${describeLocator(paging.loadMore!)}) added no rows on ${where(page)}`,
          );
        },
      );
    }
    await more.dispose();
    const last = await readListPage(page, ctx);
    add(last.rows);
    await assertComplete(
      page,
      ctx,
      byKey.size,
      last.set,
      pressed >= list.maxPages ? `list.maxPages (${list.maxPages}) presses of load more` : undefined,
    );
    return [...byKey.values()];
  }
  let last: ListPage | undefined;
  let cut: string | undefined;
  for (let pageNo = 1; pageNo <= list.maxPages; pageNo++) {
    if (pageNo > 1 && paging?.parameter) {
      await runReadSteps(session, ctx, list.steps, readParams(ctx, { page: String(pageNo) }), list.frame);
    }
    const page = await listSurface(session, ctx);
    last = await readListPage(page, ctx, enough);
    const rows = last.rows;
    const added = add(rows);
    if (last.stopped || enough?.(rows)) return [...byKey.values()];
    cut = last.cut;
    if (rows.length === 0 || !paging || (paging.parameter && added === 0)) break;
    if (pageNo === list.maxPages) {
      cut = `list.maxPages (${list.maxPages}) pages read`;
      break;
    }
    if (paging.next) {
      const next = resolveLocator(page, paging.next, {}).first();
      const usable =
        (await next.isVisible().catch(() => false)) &&
        (await next.isEnabled().catch(() => false)) &&
        (await next.getAttribute('aria-disabled').catch(() => null)) !== 'true';
      if (!usable) break;
      const firstKey = rows[0]?.billNo;
      await next.click();
      await waitUntil(
        async () => (await readRowsOnPage(page, ctx).catch(() => []))[0]?.billNo !== firstKey,
        ctx,
        () => {
          throw new StructuredContractMissingError(
            `list.paging.next (${describeLocator(paging.next!)}) did not change the list on ${where(page)}`,
          );
        },
      );
    }
  }
  await assertComplete(await listSurface(session, ctx), ctx, byKey.size, last?.set, cut);
  return [...byKey.values()];
}

/** One page of the list as read: its rows (every screen of a virtualising grid), the last row set, and why it stopped. */
interface ListPage {
  rows: ListedItem[];
  set?: RowSet;
  /** `enough` was satisfied: the rest was not read on purpose. */
  stopped: boolean;
  /** Why reading ended before the page's end (a limit), for the incomplete-list message. */
  cut?: string;
}

/** How long one screen of a virtualising grid gets to draw the rows scrolled into view. */
const SCREEN_WAIT_MS = 1500;

/**
 * Reads the rows the page shows; a grid that draws only the rows in view (rows.table.virtual, or an aria-rowcount
 * above the rows drawn) is scrolled screen by screen, in its own scroll container, until its end, rows deduplicated
 * by key and at most list.maxPages screens. The grid is scrolled back to its start afterwards.
 */
async function readListPage(page: Surface, ctx: ReadContext, enough?: (rows: ListedItem[]) => boolean): Promise<ListPage> {
  const { list } = ctx.pack;
  const first = await readRowSet(page, ctx);
  if (enough?.(first.items)) return { rows: first.items, set: first.set, stopped: true };
  let set = first.set;
  if (!set || !list.rows.table || !(list.rows.table.virtual || drawsPartly(set))) return { rows: first.items, set, stopped: false };
  const seen = new Map(first.items.map((row) => [row.billNo, row]));
  const shownKeys = (rows: ListedItem[]) => rows.map((row) => row.billNo).join('\n');
  let shown = shownKeys(first.items);
  let cut: string | undefined;
  for (let screen = 1; ; screen++) {
    if (screen >= list.maxPages) {
      cut = `list.maxPages (${list.maxPages}) screens of the grid scrolled`;
      break;
    }
    const scrolled = await scrollTable(set, 'next');
    if (!scrolled?.moved) break;
    let read: { items: ListedItem[]; set?: RowSet } | undefined;
    // A virtualising grid draws the rows scrolled into view on its next frame (or after a debounce): wait for them.
    await pollUntil(
      deadline(SCREEN_WAIT_MS),
      async () => {
        read = await readRowSet(page, ctx).catch(() => undefined);
        return read !== undefined && shownKeys(read.items) !== shown;
      },
      50,
    );
    if (read) {
      for (const row of read.items) seen.set(row.billNo, row);
      shown = shownKeys(read.items);
      if (read.set) set = { ...read.set, headers: read.set.headers.length > 0 ? read.set.headers : set.headers };
      if (enough?.(read.items)) return { rows: [...seen.values()], set, stopped: true };
    }
    if (scrolled.atEnd) break;
  }
  await scrollTable(set, 'top').catch(() => undefined);
  return { rows: [...seen.values()], set, stopped: false, cut };
}

/**
 * The row count the list's page states: list.total's pattern over its locator's text (or the page's), else the
 * aria-rowcount of the grid read, less its header rows. Undefined when the page states none.
 */
async function statedTotal(
  page: Surface,
  ctx: ReadContext,
  set: RowSet | undefined,
): Promise<{ total: number; source: string } | undefined> {
  const spec = ctx.pack.list.total;
  if (spec) {
    const where_ = spec.locator ? resolveLocator(page, spec.locator, {}).first() : page.locator('body');
    const text = ((await where_.innerText({ timeout: 2000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ');
    const match = new RegExp(spec.pattern, 'u').exec(text);
    const number = match?.[1] === undefined ? NaN : Number(match[1].replace(/[,\s.]/g, ''));
    if (!Number.isFinite(number)) {
      throw new StructuredContractMissingError(
        `list.total (/${spec.pattern}/${spec.locator ? ` in ${describeLocator(spec.locator)}` : ''}) found no number on ${where(page)} ` +
          `(it read ${JSON.stringify(text.slice(0, 120))}); group 1 of the pattern must capture the count`,
        { field: 'list.total', url: page.url() },
      );
    }
    return { total: number, source: `list.total /${spec.pattern}/` };
  }
  if (set?.rowCount !== undefined) {
    const headerRows = Math.max(set.headerRows ?? 0, set.headers.length > 0 ? 1 : 0);
    return { total: set.rowCount - headerRows, source: `the grid's aria-rowcount ${set.rowCount}, less ${headerRows} header row(s)` };
  }
  return undefined;
}

/** A list read short of the count its page states is an error naming both numbers, never a short list. */
async function assertComplete(
  page: Surface,
  ctx: ReadContext,
  read: number,
  set: RowSet | undefined,
  cut: string | undefined,
): Promise<void> {
  const stated = await statedTotal(page, ctx, set);
  if (!stated || stated.total <= read) return;
  const why = cut
    ? `reading stopped at ${cut}; raise list.maxPages`
    : 'the reader reached the end of the list; check list.paging (a pager the pack does not name) and ' +
      'rows.table.virtual (a grid that draws only the rows in view)';
  throw new ListIncompleteError(
    `the list on ${where(page)} states ${stated.total} rows (${stated.source}) but ${read} were read: ${why}`,
    stated.total,
    read,
  );
}

/** Polls `check` within one read budget (the context's timeout); `onTimeout` explains a budget spent. */
async function waitUntil(check: () => Promise<boolean>, ctx: ReadContext, onTimeout: () => never | Promise<never>): Promise<void> {
  if (await pollUntil(deadline(ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS), check, 100)) return;
  await onTimeout();
}

/** The list narrowed to one item by the pack's search steps (or the whole list when it has none). */
export async function searchList(session: OpenedSession, ctx: ReadContext & { billNo: string }): Promise<ListedItem | undefined> {
  const isItem = (row: ListedItem) => row.billNo === ctx.billNo;
  if (!ctx.pack.list.search) return (await readList(session, ctx, (rows) => rows.some(isItem))).find(isItem);
  await runReadSteps(session, ctx, ctx.pack.list.search, readParams(ctx, { page: '1', billNo: ctx.billNo }), ctx.pack.list.frame);
  return (await readListPage(await listSurface(session, ctx), ctx, (rows) => rows.some(isItem))).rows.find(isItem);
}

/** What one source says about one item. */
export interface ItemReading {
  /** Undefined when the source does not show the item at all. */
  status?: string;
  owner?: string;
  fields: Record<string, string>;
}

export interface ObserveContext extends ReadContext {
  billNo: string;
  session?: OpenedSession;
  /** The identity's API client without a browser: token auth, or cookie auth signed in by api.login. */
  api?: VendorApi;
}

/** Opens the item's detail page by the pack's steps, in the given session. */
export async function openDetail(session: OpenedSession, ctx: ReadContext & { billNo: string }): Promise<void> {
  if (!ctx.pack.detail) throw new ReadFailedError(`site pack ${ctx.pack.site} has no detail page`);
  await runReadSteps(session, ctx, ctx.pack.detail.steps, readParams(ctx, { billNo: ctx.billNo }), ctx.pack.detail.frame);
}

async function readDetail(
  session: OpenedSession,
  ctx: ObserveContext,
  /** Fields read besides detail.fields (an action's own approval fields), by name; they win over detail.fields. */
  extra: Record<string, FieldSource> = {},
): Promise<ItemReading> {
  const detail = ctx.pack.detail!;
  await openDetail(session, ctx);
  // The detail's frame (detail.frame), or the page; found again while polling, since the frame may still be loading.
  let page: Surface = await surfaceOf(session.page, detail.frame, ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let shown: string | undefined;
  // The page may render its values after load (a single-page app): poll until the status shows.
  await waitUntil(
    async () => {
      await assertSessionAlive(session.page, ctx.pack.sessionLost);
      page = await surfaceOf(session.page, detail.frame, 1000).catch(() => page);
      shown = await pageField(page, detail.status).catch(() => undefined);
      return shown !== undefined;
    },
    ctx,
    () => {
      throw new StructuredContractMissingError(`detail.status (${describeField(detail.status)}) is not on the detail page ${where(page)}`, {
        field: 'detail.status',
        url: page.url(),
      });
    },
  );
  const fields: Record<string, string> = {};
  for (const [name, source] of Object.entries({ ...detail.fields, ...extra })) {
    const value = await pageField(page, source);
    if (value !== undefined) fields[name] = value;
  }
  return { status: mapStatus(ctx.pack.statuses, shown ?? ''), owner: fields['owner'], fields };
}

/**
 * The vendor's own figures of an action (`approval.show`, and the figure its `confirm` compares with), read in the
 * given session from where the pack defines them: the item's row in the list, then its detail page (which the session
 * is left on). Never from the task. A figure that reads nothing fails loudly, naming the pack line: the approver is
 * never shown a blank where the pack promised a figure, and a typed parameter is never compared with nothing.
 */
export async function readFigures(
  session: OpenedSession,
  ctx: ObserveContext,
  actionName: string,
  names: readonly string[],
): Promise<Record<string, string>> {
  const action = own(ctx.pack.actions, actionName);
  if (!action) throw new ReadFailedError(`site pack ${ctx.pack.site} has no action ${actionName}`);
  const sources = names.map((name) => {
    const source = figureSource(ctx.pack, action, name);
    if (!source) throw new StructuredContractMissingError(`actions.${actionName}.approval.show: "${name}" is not a field of the pack`);
    return { name, ...source };
  });
  const figures: Record<string, string> = {};
  const missing = (name: string, line: string, field: FieldSource, on: string) =>
    new StructuredContractMissingError(
      `actions.${actionName}.approval.show: "${name}" (${line}, ${describeField(field)}) read nothing on ${on} of ${ctx.billNo}; ` +
        `fix ${line} to match the vendor's page, or drop "${name}" from show`,
      { field: `actions.${actionName}.approval.show`, figure: name },
    );
  const fromList = sources.filter((f) => f.from === 'list');
  if (fromList.length > 0) {
    const row = await searchList(session, ctx);
    for (const f of fromList) {
      const value = row?.fields[f.name]?.trim();
      if (!value) throw missing(f.name, f.line, f.field, 'the list row');
      figures[f.name] = value;
    }
  }
  const fromDetail = sources.filter((f) => f.from === 'detail');
  if (fromDetail.length > 0) {
    if (!ctx.pack.detail)
      throw new StructuredContractMissingError(`actions.${actionName}.approval.fields need a detail page: declare detail`);
    const reading = await readDetail(session, ctx, action.approval?.fields ?? {});
    for (const f of fromDetail) {
      const value = reading.fields[f.name]?.trim();
      if (!value) throw missing(f.name, f.line, f.field, 'the detail page');
      figures[f.name] = value;
    }
  }
  return figures;
}

/** The export file (CSV or XLSX), fetched with the session's cookie or downloaded by steps. */
async function readExport(session: OpenedSession, ctx: ObserveContext): Promise<ItemReading> {
  const spec = ctx.pack.export!;
  const params = readParams(ctx, { billNo: ctx.billNo });
  let body: Buffer;
  if (spec.url) {
    const url = new URL(fillTemplate(spec.url, params, 'url'), ctx.baseUrl);
    const response = await sessionGet(session, url, {}, ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    if (response.status() === 401 || response.status() === 403 || (response.status() >= 300 && response.status() < 400)) {
      throw new SessionLostError(`the export ${url.pathname} answered ${response.status()}: the session is gone`);
    }
    if (response.status() !== 200) throw new ReadFailedError(`the export ${url.pathname} answered ${response.status()}`);
    body = await response.body();
  } else {
    const { downloads } = await runReadSteps(session, ctx, spec.steps!, params, spec.frame);
    const last = downloads.at(-1);
    if (!last) throw new StructuredContractMissingError('export.steps downloaded no file; end them with a download step');
    body = last.body;
  }
  // A file that cannot be decoded or parsed is the pack's contract not matching the vendor (export.encoding,
  // export.delimiter): reading it again will not help, so it fails the item loudly like a missing column.
  const table = await parseExport(body, spec).catch((error: unknown) => {
    if (error instanceof ExportFormatError) throw new StructuredContractMissingError(error.message, { field: 'export' }, { cause: error });
    throw error;
  });
  const [header = [], ...rows] = table;
  const column = (name: string, field: string) => {
    const at = header.findIndex((h) => h.trim() === name);
    if (at < 0) {
      throw new StructuredContractMissingError(
        `${field} ${JSON.stringify(name)} is not a column of the export (its columns: ${header.map((h) => JSON.stringify(h)).join(', ')})`,
      );
    }
    return at;
  };
  const keyAt = column(spec.keyColumn, 'export.keyColumn');
  const statusAt = column(spec.statusColumn, 'export.statusColumn');
  const ownerAt = spec.ownerColumn ? column(spec.ownerColumn, 'export.ownerColumn') : -1;
  const row = rows.find((r) => r[keyAt]?.trim() === ctx.billNo);
  if (!row) return { fields: {} };
  return {
    status: mapStatus(spec.statusMap ?? ctx.pack.statuses, row[statusAt] ?? ''),
    owner: ownerAt >= 0 ? row[ownerAt] : undefined,
    fields: Object.fromEntries(header.map((h, i) => [h, row[i] ?? ''])),
  };
}

/** The value at a dot path (`data.items.0.state`) of a JSON document. */
export function atPath(document: unknown, path: string): unknown {
  if (path === '') return document;
  return path.split('.').reduce<unknown>((value, part) => {
    if (value === null || typeof value !== 'object') return undefined;
    return Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }, document);
}

/** The item as the JSON endpoint shows it, authenticated like the browser (cookie) or by token. */
export async function readApiItem(ctx: ObserveContext): Promise<Record<string, unknown> | undefined> {
  const spec = ctx.pack.api;
  if (!spec) throw new ReadFailedError(`site pack ${ctx.pack.site} declares no api`);
  // A token, or the cookie of api.login: no browser involved.
  if (ctx.api) return ctx.api.readItem(ctx.billNo);
  if (spec.auth === 'token') throw new ReadFailedError('no vendor API token for this identity');
  if (!ctx.session) {
    throw new ReadFailedError(
      'the api authenticates with the session cookie and needs a browser session (or api.login to sign in without one)',
    );
  }
  const url = new URL(fillTemplate(spec.itemUrl, readParams(ctx, { billNo: ctx.billNo }), 'url'), ctx.baseUrl);
  // Kept to the identity's pace; a 429 is waited out within the read's time (sessionGet).
  const response = await sessionGet(ctx.session, url, { accept: 'application/json' }, ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const status = response.status();
  if (spec.notFoundStatus.includes(status)) return undefined;
  if (status === 401 || status === 403 || (status >= 300 && status < 400)) {
    throw new SessionLostError(`the vendor API answered ${status} to the session cookie: the session is gone`);
  }
  if (status !== 200) throw new ReadFailedError(`reading ${url.pathname} answered ${status}`);
  const item = atPath(await response.json().catch(() => undefined), spec.itemPath);
  return item !== null && typeof item === 'object' ? (item as Record<string, unknown>) : undefined;
}

async function readApi(ctx: ObserveContext): Promise<ItemReading> {
  const spec = ctx.pack.api!;
  const item = await readApiItem(ctx);
  if (!item) return { fields: {} };
  const status = atPath(item, spec.statusPath);
  const owner = spec.ownerPath ? atPath(item, spec.ownerPath) : undefined;
  if (status === undefined || status === null) {
    throw new StructuredContractMissingError(`api.statusPath ${JSON.stringify(spec.statusPath)} is not in the answer of ${spec.itemUrl}`);
  }
  return {
    status: mapStatus(spec.statusMap ?? ctx.pack.statuses, String(status)),
    owner: owner === undefined || owner === null ? undefined : String(owner),
    fields: {},
  };
}

/** Reads one item through one source. The browser sources run in the given session (a fresh one for readback). */
export async function readItem(source: ReadbackSource, ctx: ObserveContext): Promise<ItemReading> {
  const { pack } = ctx;
  if (source === 'api') return readApi(ctx);
  const session = ctx.session;
  if (!session) throw new ReadFailedError(`readback source ${source} needs a browser session`);
  if (source === 'detail') {
    if (!pack.detail) throw new ReadFailedError(`site pack ${pack.site} has no detail page`);
    return readDetail(session, ctx);
  }
  if (source === 'export') {
    if (!pack.export) throw new ReadFailedError(`site pack ${pack.site} has no export`);
    return readExport(session, ctx);
  }
  const row = await searchList(session, ctx);
  return row ? { status: row.status, owner: row.owner, fields: row.fields } : { fields: {} };
}

/** One observation of an item's status from one source, for readback polling. */
export async function observeStatus(source: ReadbackSource, ctx: ObserveContext): Promise<Observation> {
  const at = new Date().toISOString();
  try {
    const { status } = await readItem(source, ctx);
    return { source, at, status };
  } catch (error) {
    if (error instanceof StructuredContractMissingError) throw error;
    if (error instanceof SessionLostError) throw error;
    return { source, at, error: (error as Error).message };
  }
}

/**
 * Who owns an item, read the way the pack's `ownership` says, for routing.
 * `listed: false` means a tenant-filtered search does not show it.
 */
export async function readOwnership(
  ctx: ObserveContext,
): Promise<{ owner?: string; expected: string; source: string; listed: boolean; status?: string; at: string }> {
  const own = ctx.pack.ownership;
  if (!own) throw new ReadFailedError(`site pack ${ctx.pack.site} declares no ownership`);
  const expected = fillTemplate(own.value, readParams(ctx));
  const at = new Date().toISOString();
  const reading = await readItem(own.source, ctx);
  const owner = own.source === 'detail' && own.field ? reading.fields[own.field] : reading.owner;
  const listed = reading.status !== undefined;
  // A tenant-filtered list or search that shows the item proves it; an owner field, when read, must match too.
  if (own.source === 'list' && listed && owner === undefined)
    return { owner: expected, expected, source: 'list', listed, status: reading.status, at };
  return { owner, expected, source: own.source, listed, status: reading.status, at };
}

/** Checks a page for every session-loss signal of the pack; throws SessionLostError naming the one seen. */
export async function checkSession(page: Page, pack: SitePack): Promise<void> {
  await assertSessionAlive(page, pack.sessionLost);
}

/** The read context of a tenant under the running config: the pack, the vendor's address, the tenant's site params. */
export function readContextFor(
  s: { pack: SitePack; config: { vendor: { base_url: string }; tenants: Array<{ id: string; site_params?: Record<string, string> }> } },
  tenant: string,
): ReadContext {
  const siteParams = s.config.tenants.find((t) => t.id === tenant)?.site_params ?? {};
  return { pack: s.pack, baseUrl: s.config.vendor.base_url, tenant, siteParams };
}
