import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { evidenceScreenshot, hasRow } from '../../src/browser/evidence-screenshot.js';

after(closeSharedBrowser);

// Rows are read as a person reads them: the key is the cell under the 单号 header.
const list = { rows: { table: {} }, key: { column: '单号' } };

test("an evidence screenshot is the viewport, scrolled so the item's row is on it; a hostile key matches nothing", async () => {
  const browser = await sharedBrowser();
  const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  try {
    const page = await context.newPage();
    const rows = Array.from({ length: 120 }, (_, i) => `<tr data-bill="B-${i}"><td>B-${i}</td><td>待处理</td></tr>`).join('');
    await page.setContent(`<table><thead><tr><th>单号</th><th>状态</th></tr></thead><tbody>${rows}</tbody></table>`);
    const rowBox = () => page.evaluate(() => document.querySelector('[data-bill="B-110"]')!.getBoundingClientRect().toJSON() as DOMRect);
    assert.ok((await rowBox()).top > 600, 'the row starts off screen');

    const shot = await evidenceScreenshot(page, { list, key: 'B-110' });
    assert.equal(shot.readUInt32BE(16), 800, 'PNG width is the viewport');
    assert.equal(shot.readUInt32BE(20), 600, 'PNG height is the viewport, not the 120-row page');
    const box = await rowBox();
    assert.ok(box.top >= 0 && box.bottom <= 600, `the row is on screen (top ${box.top})`);

    const scrolled = await page.evaluate(() => window.scrollY);
    await evidenceScreenshot(page, { list, key: 'B-109' });
    assert.equal(await page.evaluate(() => window.scrollY), scrolled, 'a row already in view does not move the page');

    assert.equal(await hasRow(page, { list, key: 'B-7' }), true);
    assert.equal(await hasRow(page, { list, key: 'B-7"], tr[data-bill' }), false);
    assert.equal(await hasRow(page, { list, key: 'B-999' }), false);
  } finally {
    await context.close();
  }
});
