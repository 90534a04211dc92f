import type { Locator as PwLocator, Page } from 'playwright-core';
import { describeLocator } from '../sitepack/action-language.js';
import type { FieldSource, Rows, SitePack } from '../sitepack/schema.js';
import { evaluateQuietly } from './quiet-page.js';
import { resolveLocator } from './resolve-locator.js';

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
  text: string;
  cells: string[];
  labels: Record<string, string | undefined>;
}

interface TableText {
  headers: string[];
  rows: RowText[];
}

const readTable = new Function(
  'elements',
  'labels',
  `${PAGE_HELPERS}
  const cellSel = 'td,th,[role=cell],[role=gridcell],[role=columnheader],[role=rowheader]';
  const cellsOf = (row) => [...row.querySelectorAll(cellSel)].filter((c) => c.closest('tr,[role=row]') === row);
  const expand = (row) => cellsOf(row).flatMap((c) => Array(Math.max(1, Number(c.getAttribute('colspan')) || 1)).fill(textOf(c)));
  const isHeader = (c) => c.matches('th:not([scope=row]),[role=columnheader]') && !c.matches('[role=cell],[role=gridcell],[role=rowheader]');
  let headers = [];
  const rows = [];
  elements.forEach((row, index) => {
    if (!visible(row)) return;
    const cells = cellsOf(row);
    if (cells.length === 0) return;
    // A row in <thead> is a header whatever its cells are: admin frameworks often build it from <td>.
    if (row.closest('thead') || cells.every(isHeader)) {
      if (headers.length === 0) headers = expand(row);
      return;
    }
    rows.push({ index, text: textOf(row), cells: expand(row), labels: Object.fromEntries(labels.map((l) => [l, labelValue(row, l)])) });
  });
  return { headers, rows };`,
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
}

export function describeRows(rows: Rows): string {
  if (rows.table) return rows.table.name ? `table ${JSON.stringify(rows.table.name)}` : 'the table';
  if (rows.items) return `items ${describeLocator(rows.items)}`;
  return `cards around ${describeLocator(rows.around!)}`;
}

/** The locator whose first match shows that rows have rendered (single-page apps render late). */
export function firstRow(page: Page, rows: Rows): PwLocator {
  if (rows.table) {
    const table = tables(page, rows.table.name);
    return table.getByRole('cell').or(table.getByRole('gridcell')).first();
  }
  return resolveLocator(page, (rows.items ?? rows.around)!, {}).first();
}

function tables(page: Page, name: string | undefined): PwLocator {
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
    const ids = (el.getAttribute('aria-labelledby') || '').split(/s+/).filter(Boolean);
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
async function tableCandidates(page: Page, name: string | undefined): Promise<PwLocator[]> {
  const all = page.locator(TABLE_ELEMENTS);
  const fast = await all.evaluateAll(namedTables, name).catch(() => [] as number[]);
  if (fast.length > 0) return fast.map((index) => all.nth(index));
  const byRole = tables(page, name);
  const count = await byRole.count();
  return Array.from({ length: count }, (_, i) => byRole.nth(i));
}

/** Finds the rows and what they show, in one round trip per kind of row. */
export async function findRows(page: Page, rows: Rows, labels: string[]): Promise<RowSet> {
  const describe = describeRows(rows);
  if (rows.table) {
    const candidates = await tableCandidates(page, rows.table.name);
    // The first table (or grid) that shows data rows; nested tables are read as their own.
    for (const [i, candidate] of candidates.entries()) {
      const elements = candidate.locator('tr, [role=row]');
      const read = await elements.evaluateAll(readTable, labels);
      if (read.rows.length > 0 || i === candidates.length - 1) {
        return { describe, rows: read.rows, headers: read.headers, row: (index) => elements.nth(index) };
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
    for (const [n, index] of found.entries()) {
      const read = readTable([...all[index].querySelectorAll('tr, [role=row]')], ${JSON.stringify(labels)});
      if (read.rows.length > 0 || n === found.length - 1) return { table: index, headers: read.headers, rows: read.rows };
    }
    return null;
  })()`;
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
export type QuietRowSet = RowSet & { table: number };

/**
 * The list's table rows read in one quiet evaluation (tableRowsExpression). Undefined when only the locators
 * can read it: rows that are not a table, no table carrying the exact name. Its `row()` refuses: a field read
 * by locator needs findRows.
 */
export async function readTableQuietly(page: Page, rows: Rows, labels: string[]): Promise<QuietRowSet | undefined> {
  const expression = tableRowsExpression(rows, labels);
  if (!expression) return undefined;
  const read = (await evaluateQuietly(page, expression)) as { table: number; headers: string[]; rows: RowText[] } | null;
  if (!read) return undefined;
  return {
    describe: describeRows(rows),
    table: read.table,
    headers: read.headers,
    rows: read.rows,
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
  page: Page,
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
export async function pageField(page: Page, source: FieldSource): Promise<string | undefined> {
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
