import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { measureLoadMore } from '../../bench/load-more-scale.js';

/**
 * A long list paged by "load more" (the whole table redrawn after each press,
 * as single-page apps do), read by the same readList a batch uses, in a real
 * Chromium. Each press is judged by a count, the button is found once, and the rows are read once:
 * before, every press read every row shown, so a list of n rows was fetched
 * and parsed n²/page-size times (half a million rows at 10,000 in presses of
 * 100). 2,000 rows here keep the file short; `npx tsx bench/load-more-scale.ts
 * 10000` reads 10,000 in 99 presses (docs/deploy.md, sizing).
 */
describe('a long list paged by load more', () => {
  after(() => closeSharedBrowser());

  test('2,000 rows in presses of 100: every key once, each row read once, a bounded number of evaluations per press', async () => {
    const report = await measureLoadMore({ rows: 2000, perPress: 100 });
    assert.equal(report.rowsInAnswer, 2000, 'every row');
    assert.equal(report.keys, 2000, 'each key once');
    assert.equal(report.pendingRows, 1000, 'the status of every row');
    assert.equal(report.rowsReturned, 2000, `each row was read from the page once (the page returned ${report.rowsReturned})`);
    // A press: a count that shows the redrawn table not grown yet, then one that shows it grown; a slow redraw adds
    // a count every 100 ms. Before, each of them read every row shown.
    assert.ok(report.evaluations <= report.presses * 6 + 5, `${report.evaluations} evaluations for ${report.presses} presses`);
    // The button is found by its role once and pressed as an element; it is looked up again only when the page
    // replaced or removed it (here: once, at the end). Before, each press resolved the role locator three times,
    // each a walk of the whole grown list: the reader's own O(rows²) (10,000 rows: 306 s, now 168 s).
    assert.ok(report.buttonLookups <= 4, `${report.buttonLookups} lookups of the load-more button for ${report.presses} presses`);
  });
});
