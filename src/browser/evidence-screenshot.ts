import type { Page } from 'playwright-core';
import { devtoolsOf, evaluateQuietly } from './quiet-page.js';
import { keyedRowIndex, labelsOf, readTableQuietly, revealRowExpression } from './page-reading.js';
import { locateRow, type RowBinding } from './locate.js';

/**
 * The screenshot stored as evidence of a guarded step: the visible viewport,
 * scrolled to the item's row when the page lists it. What an auditor needs —
 * the row acted on, the dialog, the vendor's answer — is on screen at that
 * moment; a full-page capture re-lays out the whole page and costs several
 * times as much on a long list without showing more of the item.
 */
export async function evidenceScreenshot(page: Page, row?: RowBinding): Promise<Buffer> {
  if (row) await showRow(page, row).catch(() => false);
  return viewportPng(page);
}

/** Whether the page currently shows the item's row. */
export async function hasRow(page: Page, row: RowBinding): Promise<boolean> {
  return showRow(page, row).catch(() => false);
}

/**
 * Scrolls the row into view if it is off screen. The row is found through the
 * list's row and key definition (the key compared as a value); a page without
 * the list (a detail page) simply has no row. Where the list is a table, this
 * runs quietly (quiet-page.ts): placing a picture is not an action to replay.
 */
async function showRow(page: Page, row: RowBinding): Promise<boolean> {
  const quiet = await showRowQuietly(page, row).catch(() => undefined);
  if (quiet !== undefined) return quiet;
  const found = await locateRow(page, row, 100);
  // evaluateAll: one round trip, where evaluate first waits for and hands back the element.
  return found.evaluateAll((elements) => {
    const element = elements[0];
    if (!element) return false;
    const box = element.getBoundingClientRect();
    // Centred, so the picture shows the rows around it too; a row already in view stays where it is.
    if (box.top < 0 || box.bottom > window.innerHeight) element.scrollIntoView({ block: 'center' });
    return true;
  });
}

/** showRow through DevTools; undefined when only the locators can tell (rows that are not a table, a key read by locator). */
async function showRowQuietly(page: Page, row: RowBinding): Promise<boolean | undefined> {
  const read = await readTableQuietly(page, row.list.rows, labelsOf([row.list.key]));
  if (!read) return undefined;
  const index = await keyedRowIndex(read, row.list.key, row.key);
  if (index === undefined) return undefined;
  if (index < 0) return false;
  return (await evaluateQuietly(page, revealRowExpression(read.tableIndex, index))) === true;
}

/**
 * The viewport as a lossless PNG, captured by Chromium in one DevTools call once the page's fonts have loaded.
 * Playwright's own screenshot injects and removes a caret-hiding style in every frame around the same capture,
 * and records it in the trace with DOM snapshots before and after; Chromium's fast PNG encoding (a lighter zlib
 * level, a larger file) roughly halves the capture on a software compositor. Pixels are the same: CJK text stays
 * as legible as it renders. Outside Chromium (no DevTools session), Playwright's screenshot is used.
 */
async function viewportPng(page: Page): Promise<Buffer> {
  try {
    await evaluateQuietly(page, 'document.fonts.ready.then(() => true)');
    const cdp = await devtoolsOf(page);
    const { data } = await cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true, captureBeyondViewport: false });
    return Buffer.from(data, 'base64');
  } catch {
    // No DevTools for this page (another browser, a detached session): the picture still gets taken.
    return page.screenshot();
  }
}
