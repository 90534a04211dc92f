import type { CDPSession, Page } from 'playwright-core';
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
 * the list (a detail page) simply has no row.
 */
async function showRow(page: Page, row: RowBinding): Promise<boolean> {
  const found = await locateRow(page, row, 100);
  await found.evaluate((element) => {
    const box = element.getBoundingClientRect();
    // Centred, so the picture shows the rows around it too; a row already in view stays where it is.
    if (box.top < 0 || box.bottom > window.innerHeight) element.scrollIntoView({ block: 'center' });
  });
  return true;
}

const devtools = new WeakMap<Page, Promise<CDPSession>>();

/**
 * The viewport as a lossless PNG, captured by Chromium in one DevTools call once the page's fonts have loaded.
 * Playwright's own screenshot injects and removes a caret-hiding style in every frame around the same capture,
 * and records it in the trace with DOM snapshots before and after; Chromium's fast PNG encoding (a lighter zlib
 * level, a larger file) roughly halves the capture on a software compositor. Pixels are the same: CJK text stays
 * as legible as it renders. Outside Chromium (no DevTools session), Playwright's screenshot is used.
 */
async function viewportPng(page: Page): Promise<Buffer> {
  let session = devtools.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    devtools.set(page, session);
  }
  try {
    const cdp = await session;
    await cdp.send('Runtime.evaluate', { expression: 'document.fonts.ready.then(() => true)', awaitPromise: true, returnByValue: true });
    const { data } = await cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true, captureBeyondViewport: false });
    return Buffer.from(data, 'base64');
  } catch {
    // No DevTools for this page (another browser, a detached session): the picture still gets taken.
    devtools.delete(page);
    return page.screenshot();
  }
}
