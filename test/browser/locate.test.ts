import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { useBrowserContext } from '../support/browser-back-office.js';
import { locateRow } from '../../src/browser/locate.js';

// The key is the cell under the 单号 header, read and compared as a value.
const list = { rows: { table: {} }, key: { column: '单号' } };

const browser = useBrowserContext();

/** A list whose 处理 buttons record which bill they were pressed for (`window.pressed`). */
async function listPage(bills: string[]): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setContent(
    `<script>window.pressed = []</script><table><thead><tr><th>单号</th><th>操作</th></tr></thead><tbody>${rowsHtml(bills)}</tbody></table>`,
  );
  return page;
}

function rowsHtml(bills: string[]): string {
  return bills
    .map((b) => `<tr><td>${b}</td><td><button type="button" onclick="window.pressed.push('${b}')">处理</button></td></tr>`)
    .join('');
}

const pressed = (page: Page) => page.evaluate(() => (window as unknown as { pressed: string[] }).pressed);

test('a located row stays that bill when the page re-sorts its rows before the click', async () => {
  const page = await listPage(['B-1', 'B-2', 'B-3']);
  const row = await locateRow(page, { list, key: 'B-2' }, 1000, { pin: true });
  // The page moves its rows around (a live list re-sorting): the row's old position now holds another bill.
  await page.evaluate(() => {
    const body = document.querySelector('tbody')!;
    body.append(body.firstElementChild!);
  });
  await row.getByRole('button', { name: '处理' }).click({ timeout: 2000 });
  assert.deepEqual(await pressed(page), ['B-2']);
  await page.close();
});

test('a located row the page has drawn anew is not clicked at all: the step finds nothing instead of another bill', async () => {
  const page = await listPage(['B-1', 'B-2', 'B-3']);
  const row = await locateRow(page, { list, key: 'B-2' }, 1000, { pin: true });
  // A re-render replaces the elements (here in another order): nothing may stand in for the row that was read.
  await page.evaluate(
    (html) => {
      document.querySelector('tbody')!.innerHTML = html;
    },
    rowsHtml(['B-2', 'B-3', 'B-1']),
  );
  await assert.rejects(row.getByRole('button', { name: '处理' }).click({ timeout: 500 }), /Timeout/);
  assert.deepEqual(await pressed(page), []);
  await page.close();
});

test('a pinned row the page rewrites in place to show another bill is not clicked (element reuse, as unkeyed lists do)', async () => {
  const page = await listPage(['B-1', 'B-2', 'B-3']);
  const row = await locateRow(page, { list, key: 'B-2' }, 1000, { pin: true });
  // The same <tr> now shows B-20, and its button presses for B-20: B-2 is no longer on it, not even as a prefix.
  await page.evaluate(() => {
    const tr = document.querySelectorAll('tbody tr')[1]!;
    tr.querySelector('td')!.textContent = 'B-20';
    tr.querySelector('button')!.setAttribute('onclick', "window.pressed.push('B-20')");
  });
  await assert.rejects(row.getByRole('button', { name: '处理' }).click({ timeout: 500 }), /Timeout/);
  assert.deepEqual(await pressed(page), []);
  await page.close();
});

test('a row found for a check (a wait, a done test) is not pinned: a redrawn list is checked again, not read as gone', async () => {
  const page = await listPage(['B-1', 'B-2', 'B-3']);
  const row = await locateRow(page, { list, key: 'B-2' }, 1000);
  assert.equal(await page.locator('[data-paperclip-row]').count(), 0, 'nothing is tagged');
  await page.evaluate(
    (html) => {
      document.querySelector('tbody')!.innerHTML = html;
    },
    rowsHtml(['B-1', 'B-2', 'B-3']),
  );
  assert.equal(await row.getByRole('button', { name: '处理' }).isVisible(), true, 'the redrawn row still shows');
  await page.close();
});

test('locating a row again moves the tag: one row of the page carries it at most', async () => {
  const page = await listPage(['B-1', 'B-2', 'B-3']);
  await locateRow(page, { list, key: 'B-1' }, 1000, { pin: true });
  const second = await locateRow(page, { list, key: 'B-3' }, 1000, { pin: true });
  assert.equal(await page.locator('[data-paperclip-row]').count(), 1);
  await second.getByRole('button', { name: '处理' }).click({ timeout: 2000 });
  assert.deepEqual(await pressed(page), ['B-3']);
  await page.close();
});

test('a key that is not on the list, or that looks like selector syntax, is named in the error and nothing is clicked', async () => {
  const page = await listPage(['B-1', 'B-2']);
  for (const key of ['B-9', `B-1"] , tr td`]) {
    await assert.rejects(locateRow(page, { list, key }, 200), /has list\.key \(column "单号"\) equal to the item key/);
  }
  assert.deepEqual(await pressed(page), []);
  await page.close();
});
