import type { FrameLocator, Locator as PwLocator, Page } from 'playwright-core';
import { fillTemplate, type FrameSelector, type Scope } from '../sitepack/action-language.js';
import type { SitePack } from '../sitepack/schema.js';
import { StructuredContractMissingError } from '../domain/errors.js';
import { randomUUID } from 'node:crypto';
import {
  describeField,
  drawsPartly,
  findRows,
  keyedRowIndex,
  labelsOf,
  readTableQuietly,
  ROW_TAG,
  rowField,
  scrollTable,
  tagRowExpression,
  type RowSet,
  type RowText,
} from './page-reading.js';
import { isPage, resolveFrame, type Surface } from './frames.js';
import { resolveLocator } from './resolve-locator.js';
import { evaluateQuietly } from './quiet-page.js';
import { deadline, type Deadline } from '../lib/deadline.js';

export { resolveLocator };

type Root = Surface | PwLocator | FrameLocator;

/** The item a `row` scope refers to: the list row whose key (read as the list says) equals `key`. */
export interface RowBinding {
  list: Pick<SitePack['list'], 'rows' | 'key'>;
  key: string;
}

/**
 * Finds the row whose key equals the item key. The key is read from each row
 * and compared as a value, never written into a selector, so a bill number such
 * as `X"] , tr[data-bill` is just a string that matches nothing.
 *
 * With `pin` (a step about to act in the row: click, fill, select, download), a table row is pinned when it can be
 * (pinRowQuietly); a check (a wait, a stage's done test, the settled state) keeps finding the row by position,
 * so a list the page redraws is checked again rather than read as "gone".
 */
export async function locateRow(
  page: Surface,
  binding: RowBinding,
  timeoutMs = 10_000,
  options: { pin?: boolean } = {},
): Promise<PwLocator> {
  const limit = deadline(timeoutMs);
  const grid = binding.list.rows.table;
  // A virtualising grid recycles its row elements: a pinned element may show another bill after a redraw.
  const pinned = options.pin && !grid?.virtual ? await pinRowQuietly(page, binding).catch(() => undefined) : undefined;
  if (pinned) return pinned;
  const { rows, key } = binding.list;
  // Single-page apps render rows after load: read until the first one shows (one cheap read on a rendered page).
  let set = await findRows(page, rows, labelsOf([key]));
  while (set.rows.length === 0 && !limit.expired) {
    await limit.sleep(ROW_POLL_MS);
    set = await findRows(page, rows, labelsOf([key]));
  }
  if (set.rows.length === 0) {
    throw new StructuredContractMissingError(`list.rows (${set.describe}) found no row on ${where(page)}; the page layout changed`, {
      rows: set.describe,
      url: page.url(),
    });
  }
  const found = await keyedRow(set, binding);
  if (found) return rowLocator(page, set, found, binding);
  // A grid that draws only the rows in view: its own filter box shows the row, or it is scrolled until the row shows.
  if (grid && (grid.virtual || grid.filter || drawsPartly(set))) {
    const reached = grid.filter ? await filterTo(page, set, binding, limit) : await scrollTo(page, set, binding, limit);
    if (reached) return rowLocator(page, reached.set, reached.row, binding);
  }
  const columns =
    key.column !== undefined && !set.headers.includes(key.column)
      ? set.headers.length > 0
        ? `; the columns are ${set.headers.map((h) => JSON.stringify(h)).join(', ')}`
        : '; no header row was found (a header row is a row in <thead>, or one of <th> or role=columnheader cells)'
      : '';
  throw new StructuredContractMissingError(
    `no row of ${set.describe} on ${where(page)} has list.key (${describeField(key)}) equal to the item key${columns}`,
    { rows: set.describe, key: binding.key, url: page.url() },
  );
}

async function keyedRow(set: RowSet, binding: RowBinding): Promise<RowText | undefined> {
  for (const row of set.rows) if ((await rowField(set, row, binding.list.key)) === binding.key) return row;
  return undefined;
}

/**
 * The found row as a locator. In a virtualising grid the row is found again by its key wherever Playwright resolves
 * the locator (a row element the grid redraws or recycles for another bill is never acted on): the grid's rows that
 * have a cell showing exactly the key, when only one does. Elsewhere, by position, as findRows read it.
 */
async function rowLocator(page: Surface, set: RowSet, row: RowText, binding: RowBinding): Promise<PwLocator> {
  const grid = binding.list.rows.table;
  const redraws = grid !== undefined && (grid.virtual === true || drawsPartly(set));
  if (set.table && redraws && row.cells.includes(binding.key)) {
    const byKey = set.table.locator('tr, [role=row]').filter({ has: page.getByText(binding.key, { exact: true }) });
    if ((await byKey.count().catch(() => 0)) === 1) return redrawing(byKey, redraws);
  }
  return redrawing(set.row(row.index), redraws);
}

/** Rows found in a grid that draws only the rows in view: a step acting in one lets the grid redraw first. */
const rowsOfRedrawingGrids = new WeakSet<object>();

function redrawing(row: PwLocator, redraws: boolean): PwLocator {
  if (redraws) rowsOfRedrawingGrids.add(row);
  return row;
}

/** Whether a scope is a row of a grid that redraws its rows as it scrolls (see settleGridTarget). */
export function isRowOfRedrawingGrid(scope: object): boolean {
  return rowsOfRedrawingGrids.has(scope);
}

/** Types the item key into the grid's filter box (rows.table.filter) and waits for the row to show. */
async function filterTo(
  page: Surface,
  set: RowSet,
  binding: RowBinding,
  limit: Deadline,
): Promise<{ set: RowSet; row: RowText } | undefined> {
  const filter = binding.list.rows.table?.filter;
  if (!filter) return undefined;
  await resolveLocator(page, filter, {})
    .first()
    .fill(binding.key, { timeout: Math.max(1, limit.remaining()) });
  while (!limit.expired) {
    const read = await findRows(page, binding.list.rows, labelsOf([binding.list.key])).catch(() => set);
    const row = await keyedRow(read, binding);
    if (row) return { set: read, row };
    await limit.sleep(ROW_POLL_MS);
  }
  return undefined;
}

/** Scrolls a virtualising grid from its start, screen by screen, until the item's row is drawn (or the grid ends). */
async function scrollTo(
  page: Surface,
  set: RowSet,
  binding: RowBinding,
  limit: Deadline,
): Promise<{ set: RowSet; row: RowText } | undefined> {
  let current = set;
  let how: 'top' | 'next' = 'top';
  while (!limit.expired) {
    const scrolled = await scrollTable(current, how).catch(() => undefined);
    if (!scrolled) return undefined;
    // Back at the start there is always a screen to read; further down, a scroll that did not move is the end.
    const ended = how === 'next' && !scrolled.moved;
    how = 'next';
    // The grid draws the rows scrolled into view on its next frame: read until the drawn rows change (or briefly).
    const before = current.rows.map((row) => row.text).join('\n');
    const screen = limit.within(SCREEN_WAIT_MS);
    for (;;) {
      current = await findRows(page, binding.list.rows, labelsOf([binding.list.key])).catch(() => current);
      const row = await keyedRow(current, binding);
      if (row) return { set: current, row };
      if (current.rows.map((r) => r.text).join('\n') !== before || screen.expired || !scrolled.moved) break;
      await screen.sleep(ROW_POLL_MS);
    }
    if (ended) return undefined;
  }
  return undefined;
}

/** How long one screen of a scrolled grid gets to draw its rows. */
const SCREEN_WAIT_MS = 1500;

/**
 * The item's row of a table, found without a Playwright call and pinned for the step that acts in it. The table is
 * read in an isolated world (quiet-page.ts), the row whose key equals the item key is tagged with a one-time token,
 * and the locator is that token, narrowed to an element that still has a cell showing exactly the key: Playwright
 * checks both when it acts. So a row the page moves (a re-sort) is followed, and a row it redraws, or rewrites in
 * place to show another bill, matches nothing, and the step fails instead of acting on another bill. Playwright's
 * own reading would cost two traced round trips and, on a new page, a second injection of its script.
 *
 * Undefined, and locateRow's reading decides with its messages, wherever the pin could not hold that promise: rows
 * that are not a table, a key read by locator, label or regex rather than shown whole in a cell, no rows yet (a
 * page still rendering: locateRow waits for it), the row not found, the row changed before it was tagged, or a grid that draws only part of its rows.
 */
async function pinRowQuietly(page: Surface, binding: RowBinding): Promise<PwLocator | undefined> {
  const { rows, key } = binding.list;
  if (!isPage(page)) return undefined;
  const read = await readTableQuietly(page, rows, labelsOf([key]));
  // A grid that draws only part of its rows redraws them as it scrolls: a pinned element would be gone after that.
  if (!read || drawsPartly(read)) return undefined;
  const index = await keyedRowIndex(read, key, binding.key);
  const row = read.rows.find((r) => r.index === index);
  if (!row?.cells.includes(binding.key)) return undefined;
  const token = randomUUID();
  const tagged = await evaluateQuietly(page, tagRowExpression(read.tableIndex, row.index, row.text, token));
  if (tagged !== true) return undefined;
  return page.locator(`[${ROW_TAG}="${token}"]`).filter({ has: page.getByText(binding.key, { exact: true }) });
}

/** How often a list that has not rendered its rows yet is read again. */
const ROW_POLL_MS = 50;

/**
 * Brings the target of a step acting in a grid row into view and lets the grid finish redrawing before Playwright
 * acts. A grid that draws its rows anew after a scroll (declared `rows.table.virtual`, or one stating more rows in
 * aria-rowcount than it draws: such rows are never pinned, see isRowOfRedrawingGrid) would otherwise redraw during the click itself: Playwright's
 * own scroll-into-view fires the redraw, the new row replaces the old between the mouse press and the release, the
 * click event goes to the grid around them, and nothing is pressed while the click reports success (Playwright
 * checks the hit target on the press only). After this, the target is in view and the click scrolls nothing. A grid
 * that never stops redrawing is acted on after the cap. The wait is spent on top of the step's time (at most 3 s).
 */
export async function settleGridTarget(target: PwLocator, timeoutMs: number): Promise<void> {
  const capMs = Math.max(0, Math.min(GRID_SETTLE_CAP_MS, timeoutMs / 2));
  // A target not drawn yet is left to the action's own wait (and its explanation), not waited for here.
  const attachMs = Math.max(1, Math.min(timeoutMs, 2 * GRID_SETTLE_CAP_MS));
  await target.evaluate(settleInView, { capMs, quietMs: GRID_QUIET_MS }, { timeout: attachMs });
}

/**
 * How long a scrolled grid must stay unchanged before it counts as drawn: past a redraw on the next frame, and past
 * the redraw grids debounce until scrolling has stopped (150 ms in common virtualising libraries).
 */
const GRID_QUIET_MS = 200;
/** The longest a step waits for a grid to stop redrawing. */
const GRID_SETTLE_CAP_MS = 1000;

/** In the page: scroll the element into view, then wait until its grid (else its table or root) has not changed for `quietMs`. */
const settleInView = new Function(
  'element',
  'options',
  `const { capMs, quietMs } = options;
  const grid = element.closest('[role=grid],[role=treegrid],[aria-rowcount]');
  const doc = element.ownerDocument;
  // The grid's own subtree: a clock or a spinner elsewhere on the page does not keep the wait going.
  const root = grid ?? element.closest('table') ?? element.getRootNode();
  return new Promise((resolve) => {
    const start = performance.now();
    let last = start;
    let changed = false;
    const touch = () => { last = performance.now(); changed = true; };
    const observer = new MutationObserver(touch);
    observer.observe(root, { childList: true, subtree: true, attributes: true, characterData: true });
    doc.addEventListener('scroll', touch, true);
    element.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    let frames = 0;
    const tick = () => {
      frames += 1;
      const now = performance.now();
      // Nothing scrolled or redrew over two frames: the target was in view already.
      const settled = changed ? now - last >= quietMs : frames >= 2;
      if (settled || now - start >= capMs) {
        observer.disconnect();
        doc.removeEventListener('scroll', touch, true);
        resolve();
      } else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });`,
) as (element: Element, options: { capMs: number; quietMs: number }) => Promise<void>;

/** Path, query and hash of a page: what an engineer needs to find it again. */
export function where(page: Surface): string {
  try {
    const url = new URL(page.url());
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return page.url();
  }
}

/** Ancestors up from a text to the modal drawn around it: positioned, a dialog, or at least holding a control. */
const modalLevels = new Function(
  'element',
  `let el = element;
  let levels = 0;
  let fallback = -1;
  while (el && el !== document.body && levels < 25) {
    const style = getComputedStyle(el);
    const dialogLike = el.tagName === 'DIALOG' || el.getAttribute('aria-modal') === 'true' || /^(alert)?dialog$/.test(el.getAttribute('role') || '');
    const hasControl = !!el.querySelector('button,input,textarea,select,[role=button]');
    if (hasControl && fallback < 0) fallback = levels;
    if (hasControl && (dialogLike || style.position === 'fixed' || style.position === 'absolute')) return levels;
    el = el.parentElement;
    levels += 1;
  }
  return fallback < 0 ? 0 : fallback;`,
) as (element: Element) => number;

export async function scopeRoot(
  page: Surface,
  scope: Scope | undefined,
  row: RowBinding | undefined,
  timeoutMs = 10_000,
  params: Readonly<Record<string, string>> = {},
  /**
   * `pin`: the step acts in the row (locateRow); `present: false`: the step waits for its target to go away;
   * `frame`: the frame the step's section works in (list.frame, detail.frame, an action's frame): the scope is
   * found inside it, unless the step names its own frame or the top page.
   */
  options: { pin?: boolean; present?: boolean; frame?: FrameSelector } = {},
): Promise<Root> {
  if (scope?.top) return topOf(page);
  if (scope?.frameTitle) return locateFrameByTitle(topOf(page), scope.frameTitle);
  if (scope?.frame) return resolveFrame(topOf(page), scope.frame, timeoutMs);
  const base = options.frame ? await resolveFrame(topOf(page), options.frame, timeoutMs) : page;
  return scopeIn(base, scope, row, timeoutMs, params, options);
}

function topOf(surface: Surface): Page {
  return isPage(surface) ? surface : surface.page();
}

async function scopeIn(
  page: Surface,
  scope: Scope | undefined,
  row: RowBinding | undefined,
  timeoutMs: number,
  params: Readonly<Record<string, string>>,
  options: { pin?: boolean; present?: boolean },
): Promise<Root> {
  // Names and texts of scopes are filled from params as data, like a locator's ('Edit {{billNo}}').
  const text = (value: string) => fillTemplate(value, params);
  if (!scope) return page;
  if (scope.row) {
    if (!row) throw new Error('a step scoped to the row needs the item key');
    return locateRow(page, row, timeoutMs, options);
  }
  if (scope.dialog === true) {
    return slottedScope(
      page,
      page.getByRole('dialog').or(page.getByRole('alertdialog')).filter({ visible: true }).last(),
      timeoutMs,
      options,
    );
  }
  if (scope.dialog) {
    const named = scope.dialog.name === undefined ? {} : { name: text(scope.dialog.name) };
    const roles = scope.dialog.role
      ? page.getByRole(scope.dialog.role, named)
      : page.getByRole('dialog', named).or(page.getByRole('alertdialog', named));
    return slottedScope(page, roles.filter({ visible: true }).last(), timeoutMs, options);
  }
  if (scope.modal) {
    const anchor = page
      .getByText(text(scope.modal.text), { exact: scope.modal.exact ?? false })
      .filter({ visible: true })
      .last();
    await anchor.waitFor({ state: 'visible', timeout: timeoutMs }).catch(() => {
      throw new StructuredContractMissingError(`no modal showing ${JSON.stringify(text(scope.modal!.text))} on ${where(page)}`, {
        url: page.url(),
      });
    });
    const levels = await anchor.evaluate(modalLevels);
    // Built from an integer only: the modal is `levels` ancestors up from its text.
    return slottedScope(page, anchor.locator(`xpath=ancestor-or-self::*[${levels + 1}]`), timeoutMs, options);
  }
  if (scope.menu) return page.getByRole('menu').filter({ visible: true }).last();
  return page;
}

/**
 * A scope element drawn inside a web component's open shadow root (Shoelace's <sl-dialog>, Ionic's <ion-modal>):
 * the element with the dialog role is the component's panel, and the page's own content, the question and its
 * buttons, stays in the light DOM and shows through the panel's <slot>s. Playwright's locators pierce open shadow
 * roots going down, but slotted content is not a descendant of the panel, so a step scoped to the panel found
 * nothing. When the scope element holds a slot, the scope is the component's host instead: its light DOM and its
 * shadow root, the panel included. The host is marked with a one-time token (only the attribute is written, as
 * the row pin does) because no selector reaches a host from inside its shadow root.
 *
 * A scope element in the light DOM, or in a shadow root without slots (a whole app drawn in one), stays as it is:
 * it holds its own content, and its host would widen the scope to everything the component draws. A check that
 * waits for its target to go away (`state: hidden`) does not wait for the scope to show: a scope already gone
 * leaves nothing to find.
 */
async function slottedScope(page: Surface, element: PwLocator, timeoutMs: number, options: { present?: boolean }): Promise<Root> {
  if (options.present === false && (await element.count().catch(() => 0)) === 0) return element;
  // A page with no open shadow root has no slotted scope: one quiet look spares a traced call on most pages.
  if (isPage(page) && (await evaluateQuietly(page, HAS_OPEN_SHADOW_ROOT).catch(() => true)) === false) return element;
  const token = randomUUID();
  const tagged = await element
    .evaluate(tagSlottingHost, [SCOPE_TAG, token] as const, { timeout: Math.max(1, timeoutMs) })
    .catch(() => false);
  return tagged ? page.locator(`[${SCOPE_TAG}="${token}"]`) : element;
}

/** Whether the page's document holds an open shadow root (the first one found answers: no need to look inside it). */
const HAS_OPEN_SHADOW_ROOT = `(() => {
  const walker = document.createTreeWalker(document, NodeFilter.SHOW_ELEMENT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.shadowRoot) return true;
  return false;
})()`;

/** The attribute slottedScope marks a component's host with. */
const SCOPE_TAG = 'data-paperclip-scope';

/** Tags the host of the shadow root `element` lives in, when `element` shows slotted content; false otherwise. */
const tagSlottingHost = new Function(
  'element',
  'arg',
  `const [attribute, token] = arg;
  const root = element.getRootNode();
  if (!(root instanceof ShadowRoot) || !(element.tagName === 'SLOT' || element.querySelector('slot'))) return false;
  root.host.setAttribute(attribute, token);
  return true;`,
) as (element: Element, arg: readonly [string, string]) => boolean;

async function locateFrameByTitle(page: Page, title: string): Promise<FrameLocator> {
  const frames = page.locator('iframe');
  await frames
    .first()
    .waitFor({ state: 'attached' })
    .catch(() => undefined);
  const index = await frames.evaluateAll((elements, wanted) => elements.findIndex((el) => el.getAttribute('title') === wanted), title);
  if (index < 0) {
    throw new StructuredContractMissingError(`no iframe titled "${title}" on this page`, { frameTitle: title, url: page.url() });
  }
  return frames.nth(index).contentFrame();
}
