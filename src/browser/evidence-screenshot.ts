import type { Page } from 'playwright-core';
import { locateRow, type RowBinding } from './locate.js';

/**
 * The screenshot stored as evidence of a guarded step: the visible viewport,
 * scrolled to the item's row when the page lists it. What an auditor needs —
 * the row acted on, the dialog, the vendor's answer — is on screen at that
 * moment; a full-page capture re-lays out the whole page and costs several
 * times as much on a long list without showing more of the item.
 */
export async function evidenceScreenshot(page: Page, row?: RowBinding): Promise<Buffer> {
  if (row) {
    const target = await locateRow(page, row).catch(() => undefined);
    // A modal dialog stays on screen whatever the scroll; only bring the row in when it is not visible already.
    await target?.scrollIntoViewIfNeeded({ timeout: 1000 }).catch(() => undefined);
  }
  return page.screenshot();
}
