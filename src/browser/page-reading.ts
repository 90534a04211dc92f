import type { Locator as PwLocator } from 'playwright-core';
import { describeLocator } from '../sitepack/action-language.js';
import type { FieldSource, Rows, SitePack } from '../sitepack/schema.js';
import { evaluateQuietly } from './quiet-page.js';
import { resolveLocator } from './resolve-locator.js';
import { isPage, type Surface } from './frames.js';

/**
 * Reading values off pages that were not built for us: rows of tables, ARIA
 * grids, list items and role-less cards, and values next to labels. Nothing
 * from a site pack or an item ever becomes selector syntax: labels, headers and
 * keys are compared as strings inside the page.
 */

/*
 * Page-side code is built with `new Function`: the TypeScript loader renames
 * helper functions written in a callback with a shim that does not exist in the
 * page, and these readers need helpers.
 */
const PAGE_HELPERS = `
  const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const textOf = (el) => norm(el.innerText !== undefined ? el.innerText : el.textContent);
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const stripSep = (s) => norm(s).replace(/[:：]\\s*$/, '');
  const labelValue = (root, label) => {
    const all = [root, ...root.querySelectorAll('*')];
    for (const el of all) {
      if (!visible(el) || stripSep(textOf(el)) !== label) continue;
      if ([...el.children].some((child) => stripSep(textOf(child)) === label)) continue;
      if (el.control && 'value' in el.control) return el.control.value;
      const sibling = el.nextElementSibling;
      if (sibling && textOf(sibling)) return textOf(sibling);
      const parentText = el.parentElement ? textOf(el.parentElement) : '';
      const rest = parentText.startsWith(textOf(el)) ? norm(parentText.slice(textOf(el).length).replace(/^[:：]/, '')) : '';
      if (rest) return rest;
    }
    const text = textOf(root);
    const at = text.indexOf(label);
    if (at >= 0) {
      const m = /^\\s*[:：]\\s*(\\S+)/.exec(text.slice(at + label.length));
      if (m) return m[1];
    }
    return undefined;
  };
`;

/** What one row shows: its text, its cells in column order, and values next to the labels asked for. */
export interface RowText {
  index: number;
  /** The row's aria-rowindex, when it states one (a grid's position of the row, header rows counted). */
  rowIndex?: number;
  text: string;
  cells: string[];
  labels: Record<string, string | undefined>;
}

interface TableText {
  headers: string[];
  rows: RowText[];
  /** Header rows seen (the first and any repeated one), for the row count a grid states. */
  headerRows: number;
  /** The aria-rowcount the grid states (header rows included), when it states one. */
  rowCount?: number;
  /** Whether a row carries aria-rowindex (a grid that may draw only some of its rows). */
  indexed: boolean;
}

const readTable = new Function(
  'elements',
  'labels',
  `${PAGE_HELPERS}
  const cellSel = 'td,th,[role=cell],[role=gridcell],[role=columnheader],[role=rowheader]';
  const cellsOf = (row) => [...row.querySelectorAll(cellSel)].filter((c) => c.closest('tr,[role=row]') === row);
  const colOf = (c) => Number(c.getAttribute('aria-colindex')) || 0;
  const expand = (row) => {
    const cells = cellsOf(row);
    // Cells that state their column (a grid that draws only some columns, or skips empty ones) go where they say.
    if (cells.length > 0 && cells.every((c) => colOf(c) > 0)) {
      const placed = [];
      for (const c of cells) placed[colOf(c) - 1] = textOf(c);
      return Array.from(placed, (v) => (v === undefined ? '' : v));
    }
    return cells.flatMap((c) => Array(Math.max(1, Number(c.getAttribute('colspan')) || 1)).fill(textOf(c)));
  };
  const isHeader = (c) => c.matches('th:not([scope=row]),[role=columnheader]') && !c.matches('[role=cell],[role=gridcell],[role=rowheader]');
  const table = elements[0] ? elements[0].closest('table,[role=table],[role=grid],[role=treegrid]') : null;
  const stated = table ? Number(table.getAttribute('aria-rowcount')) : NaN;
  let headers = [];
  let headerRows = 0;
  let indexed = false;
  const rows = [];
  elements.forEach((row, index) => {
    if (!visible(row)) return;
    const cells = cellsOf(row);
    if (cells.length === 0) return;
    if (row.hasAttribute('aria-rowindex')) indexed = true;
    const shown = expand(row);
    // A row in <thead> is a header whatever its cells are: admin frameworks often build it from <td>. A body row
    // showing exactly the header texts is the header repeated (per printed page, per group, per <tbody>).
    const repeated = headers.length > 0 && shown.length === headers.length && shown.every((text, i) => text === headers[i]);
    if (row.closest('thead') || cells.every(isHeader) || repeated) {
      if (headers.length === 0) headers = shown;
      headerRows += 1;
      return;
    }
    const at = Number(row.getAttribute('aria-rowindex')) || undefined;
    rows.push({ index, rowIndex: at, text: textOf(row), cells: shown, labels: Object.fromEntries(labels.map((l) => [l, labelValue(row, l)])) });
  });
  return { headers, rows, headerRows, indexed, rowCount: stated > 0 ? stated : undefined };`,
) as (elements: Element[], labels: string[]) => TableText;

const readItems = new Function(
  'elements',
  'labels',
  `${PAGE_HELPERS}
  return elements
    .map((el, index) => ({ el, index }))
    .filter(({ el }) => visible(el))
    .map(({ el, index }) => ({ index, text: textOf(el), cells: [], labels: Object.fromEntries(labels.map((l) => [l, labelValue(el, l)])) }));`,
) as (elements: Element[], labels: string[]) => RowText[];

/** How many ancestors up each anchor's card is: the largest element around it holding no other anchor. */
const cardLevels = new Function(
  'anchors',
  `return anchors.map((anchor) => {
    let levels = 0;
    let el = anchor;
    while (el.parentElement && el.parentElement !== document.body && !anchors.some((other) => other !== anchor && el.parentElement.contains(other))) {
      el = el.parentElement;
      levels += 1;
    }
    return levels;
  });`,
) as (anchors: Element[]) => number[];

const readLabel = new Function('root', 'label', `${PAGE_HELPERS} return labelValue(root, label);`) as (
  root: Element,
  label: string,
) => string | undefined;

const readText = new Function('root', `${PAGE_HELPERS} return textOf(root);`) as (root: Element) => string;

/** The rows a list's `rows` definition finds on the page, readable one by one. */
export interface RowSet {
  /** For messages: `table "差异清单"`, `items role=listitem`... */
  describe: string;
  /** Visible rows, in page order, with what they show. */
  rows: RowText[];
  headers: string[];
  /** The Playwright locator of a row (by its index among all matches). */
  row(index: number): PwLocator;
  /** The table or grid element the rows were read from (tables only). */
  table?: PwLocator;
  /** What the table says of its size (tables only): see TableText. */
  headerRows?: number;
  rowCount?: number;
  indexed?: boolean;
}

/** The grid-level facts of a table read, copied onto a RowSet. */
function sizeOf(read: TableText): Pick<RowSet, 'headerRows' | 'rowCount' | 'indexed'> {
  return { headerRows: read.headerRows, rowCount: read.rowCount, indexed: read.indexed };
}

/**
 * Whether a table draws only some of its rows: it states an aria-rowcount above the rows it draws. A read of such a
 * grid scrolls it (or the pack says `rows.table.virtual`).
 */
export function drawsPartly(set: RowSet): boolean {
  return set.rowCount !== undefined && set.rowCount > (set.headerRows ?? 0) + set.rows.length;
}

export function describeRows(rows: Rows): string {
  if (rows.table) return rows.table.name ? `table ${JSON.stringify(rows.table.name)}` : 'the table';
  if (rows.items) return `items ${describeLocator(rows.items)}`;
  return `cards around ${describeLocator(rows.around!)}`;
}

/** The locator whose first match shows that rows have rendered (single-page apps render late). */
export function firstRow(page: Surface, rows: Rows): PwLocator {
  if (rows.table) {
    const table = tables(page, rows.table.name);
    return table.getByRole('cell').or(table.getByRole('gridcell')).first();
  }
  return resolveLocator(page, (rows.items ?? rows.around)!, {}).first();
}

function tables(page: Surface, name: string | undefined): PwLocator {
  const byName = name === undefined ? {} : { name };
  return page.getByRole('table', byName).or(page.getByRole('grid', byName)).or(page.getByRole('treegrid', byName));
}

/** Every element that is a table or grid by tag or by role: one querySelectorAll, no role computation. */
const TABLE_ELEMENTS = 'table, [role=table], [role=grid], [role=treegrid]';

/**
 * Which of the TABLE_ELEMENTS are the named table: their indexes, in page order, judged by the accessible name
 * a table usually has (aria-labelledby, aria-label, its caption, its title) compared whole. Shown ones only.
 */
const namedTables = new Function(
  'elements',
  'name',
  `${PAGE_HELPERS}
  const roleOf = (el) => el.getAttribute('role') || (el.tagName === 'TABLE' ? 'table' : '');
  const accessibleName = (el) => {
    const ids = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
    if (ids.length > 0) return norm(ids.map((id) => { const ref = document.getElementById(id); return ref ? ref.textContent : ''; }).join(' '));
    const label = norm(el.getAttribute('aria-label'));
    if (label) return label;
    const caption = el.tagName === 'TABLE' && el.caption ? norm(el.caption.textContent) : '';
    if (caption) return caption;
    return norm(el.getAttribute('title'));
  };
  const wanted = name === undefined ? undefined : norm(name).toLowerCase();
  return elements
    .map((el, index) => ({ el, index }))
    .filter(({ el }) => ['table', 'grid', 'treegrid'].includes(roleOf(el)) && el.getAttribute('aria-hidden') !== 'true' && visible(el))
    .filter(({ el }) => wanted === undefined || accessibleName(el).toLowerCase() === wanted)
    .map(({ index }) => index);`,
) as (elements: Element[], name: string | undefined) => number[];

/**
 * The tables (or grids) a list's rows live in, in page order. Found first without Playwright's role engine, whose
 * every query walks the whole page computing roles (tens of ms on a long list, and a row is located several
 * times per item); when no table carries exactly the wanted name that way, the role engine decides, with its own
 * name matching. Each locator is positional among TABLE_ELEMENTS, so it resolves with one querySelectorAll.
 */
async function tableCandidates(page: Surface, name: string | undefined): Promise<PwLocator[]> {
  const all = page.locator(TABLE_ELEMENTS);
  const fast = await all.evaluateAll(namedTables, name).catch(() => [] as number[]);
  if (fast.length > 0) return fast.map((index) => all.nth(index));
  const byRole = tables(page, name);
  const count = await byRole.count();
  return Array.from({ length: count }, (_, i) => byRole.nth(i));
}

/** Finds the rows and what they show, in one round trip per kind of row. */
export async function findRows(page: Surface, rows: Rows, labels: string[]): Promise<RowSet> {
  const describe = describeRows(rows);
  if (rows.table) {
    const candidates = await tableCandidates(page, rows.table.name);
    // The first table (or grid) that shows data rows; nested tables are read as their own. A table of headers only
    // just before it lends it its headers: frameworks with a fixed header draw the header and the body as two tables.
    let lent: string[] = [];
    for (const [i, candidate] of candidates.entries()) {
      const elements = candidate.locator('tr, [role=row]');
      const read = await elements.evaluateAll(readTable, labels);
      if (read.rows.length === 0 && read.headers.length > 0) lent = read.headers;
      if (read.rows.length > 0 || i === candidates.length - 1) {
        const headers = read.headers.length > 0 ? read.headers : lent;
        return { describe, rows: read.rows, headers, row: (index) => elements.nth(index), table: candidate, ...sizeOf(read) };
      }
    }
    return { describe, rows: [], headers: [], row: () => tables(page, rows.table!.name).first() };
  }
  if (rows.items) {
    const elements = resolveLocator(page, rows.items, {});
    const read = await elements.evaluateAll(readItems, labels);
    return { describe, rows: read, headers: [], row: (index) => elements.nth(index) };
  }
  const anchors = resolveLocator(page, rows.around!, {});
  const levels = await anchors.evaluateAll(cardLevels);
  // The card is `levels` ancestors up from its anchor; built from integers only.
  const card = (index: number) => anchors.nth(index).locator(`xpath=ancestor-or-self::*[${(levels[index] ?? 0) + 1}]`);
  const read: RowText[] = [];
  for (let index = 0; index < levels.length; index++) {
    const [one] = await card(index).evaluateAll(readItems, labels);
    if (one) read.push({ ...one, index });
  }
  return { describe, rows: read, headers: [], row: card };
}

/**
 * The same reading as findRows for a list of table rows, as one expression to evaluate in an isolated world of
 * the page through DevTools (quiet-page.ts): no Playwright call, so nothing is recorded in a running trace. Only
 * the main document's light DOM is read (no shadow roots, no frames): where that finds no table, findRows decides.
 * Undefined when the rows are not a table (items and cards need Playwright's locators).
 */
function tableRowsExpression(rows: Rows, labels: string[]): string | undefined {
  if (!rows.table) return undefined;
  return `(() => {
    const namedTables = ${namedTables.toString()};
    const readTable = ${readTable.toString()};
    const all = [...document.querySelectorAll(${JSON.stringify(TABLE_ELEMENTS)})];
    const found = namedTables(all, ${JSON.stringify(rows.table.name)});
    let lent = [];
    for (const [n, index] of found.entries()) {
      const read = readTable([...all[index].querySelectorAll('tr, [role=row]')], ${JSON.stringify(labels)});
      if (read.rows.length === 0 && read.headers.length > 0) lent = read.headers;
      if (read.rows.length > 0 || n === found.length - 1) return { ...read, table: index, headers: read.headers.length > 0 ? read.headers : lent };
    }
    return null;
  })()`;
}

/**
 * How many row elements the list shows now, without reading any of them: one evaluation that returns a number,
 * for waiting until a "load more" press added rows. It counts what a read would look at (rows of the named
 * tables, or the item or card anchors), header rows and hidden rows included, so it is for comparing counts
 * of one list, not for the number of rows a read returns.
 */
export async function countRows(page: Surface, rows: Rows): Promise<number> {
  if (rows.table) {
    const expression = `(() => {
      const namedTables = ${namedTables.toString()};
      const all = [...document.querySelectorAll(${JSON.stringify(TABLE_ELEMENTS)})];
      return namedTables(all, ${JSON.stringify(rows.table.name)}).reduce((n, index) => n + all[index].querySelectorAll('tr, [role=row]').length, 0);
    })()`;
    const quiet = isPage(page) ? await evaluateQuietly(page, expression).catch(() => undefined) : undefined;
    if (typeof quiet === 'number' && quiet > 0) return quiet;
    return tables(page, rows.table.name).locator('tr, [role=row]').count();
  }
  return resolveLocator(page, (rows.items ?? rows.around)!, {}).count();
}

/** The page-side expression for row `row` of the table `table` (indexes as tableRowsExpression returned them), or undefined. */
function rowAtExpression(table: number, row: number): string {
  return `(() => {
    const tables = document.querySelectorAll(${JSON.stringify(TABLE_ELEMENTS)});
    return tables[${table}] ? tables[${table}].querySelectorAll('tr, [role=row]')[${row}] : undefined;
  })()`;
}

/** Scrolls row `row` of the table `table` (indexes as tableRowsExpression returned them) into view, centred, if it is off screen. */
export function revealRowExpression(table: number, row: number): string {
  return `(() => {
    const element = ${rowAtExpression(table, row)};
    if (!element) return false;
    const box = element.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) element.scrollIntoView({ block: 'center' });
    return true;
  })()`;
}

/**
 * Scrolls the scroll container of a table's rows: the nearest element around its last drawn row that scrolls (a
 * grid's own viewport, a panel around it), else the document. `top` goes back to the start; `next` moves by most of
 * a screen, so consecutive screens overlap by a few rows and no row is skipped.
 */
const scrollRows = new Function(
  'table',
  'how',
  `const scrolls = (el) => /(auto|scroll|overlay)/.test(getComputedStyle(el).overflowY) && el.scrollHeight > el.clientHeight + 1;
  const rows = table.querySelectorAll('tr,[role=row]');
  let box = null;
  for (let el = rows[rows.length - 1] || table; el && !box; el = el.parentElement) if (scrolls(el)) box = el;
  box = box || document.scrollingElement || document.documentElement;
  const screen = box === document.scrollingElement ? window.innerHeight : box.clientHeight;
  const before = box.scrollTop;
  if (how === 'top') box.scrollTop = 0;
  else box.scrollTop = before + Math.max(20, Math.floor(screen * 0.8));
  return { moved: box.scrollTop !== before, atEnd: box.scrollTop + screen >= box.scrollHeight - 2 };`,
) as (table: Element, how: 'top' | 'next') => { moved: boolean; atEnd: boolean };

/** Scrolls a table's rows (scrollRows); undefined when the set is not a table. */
export async function scrollTable(set: RowSet, how: 'top' | 'next'): Promise<{ moved: boolean; atEnd: boolean } | undefined> {
  if (!set.table) return undefined;
  return set.table.evaluate(scrollRows, how);
}

/** The attribute a quietly located row is tagged with (tagRowExpression): a one-time token, never a value from the page. */
export const ROW_TAG = 'data-paperclip-row';

/**
 * Tags row `row` of the table `table` (indexes as tableRowsExpression returned them) with `token`, if it still shows
 * `text` (what the read saw): a row the page re-rendered or re-sorted since is not tagged. Tags of earlier lookups
 * are removed, so one row at most carries one.
 */
export function tagRowExpression(table: number, row: number, text: string, token: string): string {
  return `(() => {
    ${PAGE_HELPERS}
    for (const old of document.querySelectorAll(${JSON.stringify(`[${ROW_TAG}]`)})) old.removeAttribute(${JSON.stringify(ROW_TAG)});
    const element = ${rowAtExpression(table, row)};
    if (!element || textOf(element) !== ${JSON.stringify(text)}) return false;
    element.setAttribute(${JSON.stringify(ROW_TAG)}, ${JSON.stringify(token)});
    return true;
  })()`;
}

/** A table's rows as readTableQuietly read them, with the table's index among TABLE_ELEMENTS (for revealRowExpression). */
export type QuietRowSet = RowSet & { tableIndex: number };

/**
 * The list's table rows read in one quiet evaluation (tableRowsExpression). Undefined when only the locators
 * can read it: rows that are not a table, no table carrying the exact name. Its `row()` refuses: a field read
 * by locator needs findRows.
 */
export async function readTableQuietly(page: Surface, rows: Rows, labels: string[]): Promise<QuietRowSet | undefined> {
  const expression = tableRowsExpression(rows, labels);
  // The isolated world is the top document's: a frame's rows are read through the locators.
  if (!expression || !isPage(page)) return undefined;
  const read = (await evaluateQuietly(page, expression)) as (TableText & { table: number }) | null;
  if (!read) return undefined;
  return {
    describe: describeRows(rows),
    tableIndex: read.table,
    table: page.locator(TABLE_ELEMENTS).nth(read.table),
    headers: read.headers,
    rows: read.rows,
    ...sizeOf(read),
    row: () => {
      throw new Error('a field read by locator needs findRows');
    },
  };
}

/** Which row of a quietly read table is the item's: by column or label (a key read by locator: undefined; none: -1). */
export async function keyedRowIndex(set: RowSet, key: FieldSource, wanted: string): Promise<number | undefined> {
  if (key.locator) return undefined;
  for (const row of set.rows) if ((await rowField(set, row, key)) === wanted) return row.index;
  return -1;
}

/**
 * Whether a cell of the item's row shows `text` (the whole cell when `exact`, else a case-insensitive part of
 * it), read quietly (quiet-page.ts). A "yes" holds: such a cell is what Playwright's getByText finds in the
 * row too. Undefined means only the locators can tell (not a table, the row not found, no such cell).
 */
export async function rowCellShowsQuietly(
  page: Surface,
  row: { list: Pick<SitePack['list'], 'rows' | 'key'>; key: string },
  text: string,
  exact: boolean,
): Promise<true | undefined> {
  const read = await readTableQuietly(page, row.list.rows, labelsOf([row.list.key]));
  if (!read) return undefined;
  const index = await keyedRowIndex(read, row.list.key, row.key);
  const cells = read.rows.find((r) => r.index === index)?.cells ?? [];
  const norm = (value: string) => value.replace(/\s+/g, ' ').trim();
  const wanted = norm(text);
  const shows = cells.some((cell) => (exact ? norm(cell) === wanted : norm(cell).toLowerCase().includes(wanted.toLowerCase())));
  return shows ? true : undefined;
}

/** Labels a set of field sources reads (so one round trip fetches them all). */
export function labelsOf(sources: FieldSource[]): string[] {
  return [...new Set(sources.flatMap((s) => (s.label === undefined ? [] : [s.label])))];
}

/** Why a field could not be read, for the error message. */
export function describeField(source: FieldSource): string {
  const how =
    source.column !== undefined
      ? `column ${JSON.stringify(source.column)}`
      : source.label !== undefined
        ? `label ${JSON.stringify(source.label)}`
        : source.locator
          ? describeLocator(source.locator)
          : undefined;
  const regex = source.regex !== undefined ? `regex /${source.regex}/` : undefined;
  return [how, regex].filter(Boolean).join(' then ');
}

function applyRegex(text: string | undefined, regex: string | undefined): string | undefined {
  if (text === undefined || regex === undefined) return text;
  const match = new RegExp(regex, 'u').exec(text);
  if (!match) return undefined;
  return (match[1] ?? match[0]).trim();
}

/** The cell of `row` under the header `column` (exact header text first, then a header containing it). */
function cellUnder(set: RowSet, row: RowText, column: string): string | undefined {
  let at = set.headers.indexOf(column);
  if (at < 0) at = set.headers.findIndex((h) => h.includes(column));
  return at < 0 ? undefined : row.cells[at];
}

/** Reads one field of one row; undefined (or empty) when the row does not show it. */
export async function rowField(set: RowSet, row: RowText, source: FieldSource): Promise<string | undefined> {
  let text: string | undefined;
  if (source.column !== undefined) text = cellUnder(set, row, source.column);
  else if (source.label !== undefined) text = row.labels[source.label];
  else if (source.locator) {
    const found = resolveLocator(set.row(row.index), source.locator, {}).first();
    text = (await found.count()) > 0 ? ((await found.innerText().catch(() => '')) ?? '').trim() : undefined;
  } else text = row.text;
  const value = applyRegex(text, source.regex);
  return value === undefined || value === '' ? undefined : value;
}

/** Reads one field on a whole page (a detail page): by label, locator, regex over the page text, or a table column. */
export async function pageField(page: Surface, source: FieldSource): Promise<string | undefined> {
  const body = page.locator('body');
  let text: string | undefined;
  if (source.label !== undefined) text = await body.evaluate(readLabel, source.label);
  else if (source.locator) {
    const found = resolveLocator(page, source.locator, {}).first();
    text = (await found.count()) > 0 ? (await found.innerText()).trim() : undefined;
  } else if (source.column !== undefined) {
    const set = await findRows(page, { table: {} }, []);
    text = set.rows[0] ? cellUnder(set, set.rows[0], source.column) : undefined;
  } else text = await body.evaluate(readText);
  const value = applyRegex(text ?? undefined, source.regex);
  return value === undefined || value === '' ? undefined : value;
}
