import type { FrameLocator, Locator as PwLocator, Page } from 'playwright-core';
import { fillTemplate, type Scope } from '../sitepack/action-language.js';
import type { SitePack } from '../sitepack/schema.js';
import { StructuredContractMissingError } from '../domain/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { describeField, findRows, keyedRowIndex, labelsOf, readTableQuietly, ROW_TAG, rowField, tagRowExpression } from './page-reading.js';
import { resolveLocator } from './resolve-locator.js';
import { evaluateQuietly } from './quiet-page.js';

export { resolveLocator };

type Root = Page | PwLocator | FrameLocator;

/** The item a `row` scope refers to: the list row whose key (read as the list says) equals `key`. */
export interface RowBinding {
  list: Pick<SitePack['list'], 'rows' | 'key'>;
  key: string;
}

/**
 * Finds the row whose key equals the item key. The key is read from each row
 * and compared as a value, never written into a selector, so a bill number such
 * as `X"] , tr[data-bill` is just a string that matches nothing.
 */
export async function locateRow(page: Page, binding: RowBinding, timeoutMs = 10_000): Promise<PwLocator> {
  const deadline = Date.now() + timeoutMs;
  const quiet = await locateRowQuietly(page, binding, deadline).catch(() => undefined);
  if (quiet) return quiet;
  const { rows, key } = binding.list;
  // Single-page apps render rows after load: read until the first one shows (one cheap read on a rendered page).
  let set = await findRows(page, rows, labelsOf([key]));
  while (set.rows.length === 0 && Date.now() < deadline) {
    await sleep(Math.min(ROW_POLL_MS, Math.max(0, deadline - Date.now())));
    set = await findRows(page, rows, labelsOf([key]));
  }
  if (set.rows.length === 0) {
    throw new StructuredContractMissingError(`list.rows (${set.describe}) found no row on ${where(page)}; the page layout changed`, {
      rows: set.describe,
      url: page.url(),
    });
  }
  for (const row of set.rows) {
    if ((await rowField(set, row, key)) === binding.key) return set.row(row.index);
  }
  throw new StructuredContractMissingError(
    `no row of ${set.describe} on ${where(page)} has list.key (${describeField(key)}) equal to the item key`,
    { rows: set.describe, key: binding.key, url: page.url() },
  );
}

/**
 * locateRow for a list that is a table, without a Playwright call: the rows are read and the item's row is tagged
 * with a one-time token in an isolated world (quiet-page.ts), and the locator is that token. Playwright's own
 * reading costs two traced round trips and, on every new document, a second injection of its script; the click
 * that follows still goes through Playwright's locator and its checks. The tag also pins the element: a row the
 * page re-rendered or re-sorted in between is not tagged (or loses the tag), so the step finds nothing and fails
 * instead of acting on whatever row now sits at that position. Undefined where only the locators can tell (rows
 * that are not a table, a key read by locator) and where the row is not found: locateRow's own reading then
 * decides, with its messages.
 */
async function locateRowQuietly(page: Page, binding: RowBinding, deadline: number): Promise<PwLocator | undefined> {
  const { rows, key } = binding.list;
  let read = await readTableQuietly(page, rows, labelsOf([key]));
  while (read && read.rows.length === 0 && Date.now() < deadline) {
    await sleep(Math.min(ROW_POLL_MS, Math.max(0, deadline - Date.now())));
    read = await readTableQuietly(page, rows, labelsOf([key]));
  }
  if (!read) return undefined;
  const index = await keyedRowIndex(read, key, binding.key);
  const row = read.rows.find((r) => r.index === index);
  if (index === undefined || !row) return undefined;
  const token = randomUUID();
  const tagged = await evaluateQuietly(page, tagRowExpression(read.table, index, row.text, token));
  return tagged === true ? page.locator(`[${ROW_TAG}="${token}"]`) : undefined;
}

/** How often a list that has not rendered its rows yet is read again. */
const ROW_POLL_MS = 50;

/** Path, query and hash of a page: what an engineer needs to find it again. */
export function where(page: Page): string {
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
  page: Page,
  scope: Scope | undefined,
  row: RowBinding | undefined,
  timeoutMs = 10_000,
  params: Readonly<Record<string, string>> = {},
): Promise<Root> {
  // Names and texts of scopes are filled from params as data, like a locator's ('Edit {{billNo}}').
  const text = (value: string) => fillTemplate(value, params);
  if (!scope) return page;
  if (scope.row) {
    if (!row) throw new Error('a step scoped to the row needs the item key');
    return locateRow(page, row, timeoutMs);
  }
  if (scope.dialog === true) return page.getByRole('dialog').or(page.getByRole('alertdialog')).filter({ visible: true }).last();
  if (scope.dialog) {
    const options = scope.dialog.name === undefined ? {} : { name: text(scope.dialog.name) };
    const roles = scope.dialog.role
      ? page.getByRole(scope.dialog.role, options)
      : page.getByRole('dialog', options).or(page.getByRole('alertdialog', options));
    return roles.filter({ visible: true }).last();
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
    return anchor.locator(`xpath=ancestor-or-self::*[${levels + 1}]`);
  }
  if (scope.menu) return page.getByRole('menu').filter({ visible: true }).last();
  if (scope.frameTitle) return locateFrameByTitle(page, scope.frameTitle);
  return page;
}

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
