import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useBrowserContext } from '../support/browser-back-office.js';
import { startPageServer, type PageServer } from '../support/page-server.js';
import { watchCommitRequests } from '../../src/browser/commit-requests.js';

const browser = useBrowserContext();

/**
 * A page that shows success the moment 确定 is pressed (an optimistic toast) while its write request is still on its
 * way, and a vendor that applies a write only if its client is still there when it is done (a request context
 * cancelled on disconnect): leaving the page too soon loses the write, with the success toast already shown.
 */
const PAGE = `<!doctype html><html lang="zh-CN"><body><p id="toast"></p>
<button type="button" onclick="document.getElementById('toast').textContent = '操作成功'; fetch('/write', { method: 'POST', body: '{}' });">确定</button>
<button type="button" onclick="fetch('/hang', { method: 'POST', body: '{}' });">挂起</button></body></html>`;

let pages: PageServer | undefined;
const written: string[] = [];

async function server(): Promise<PageServer> {
  pages ??= await startPageServer((url: URL, req: IncomingMessage, res: ServerResponse) => {
    if (url.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (url.pathname === '/write' && req.method === 'POST') {
      let gone = false;
      res.on('close', () => {
        if (!res.writableFinished) gone = true;
      });
      req.resume();
      setTimeout(() => {
        if (gone) return;
        written.push('write');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }, 700);
      return res;
    }
    if (url.pathname === '/hang' && req.method === 'POST') return res; // never answered
    return undefined;
  });
  return pages;
}

test.after(async () => {
  await pages?.close();
});

test('a page left right after its commit click loses a write its vendor drops on disconnect (the vendor behaviour)', async () => {
  const { url } = await server();
  written.length = 0;
  const page = await browser.context.newPage();
  await page.goto(url);
  await page.getByRole('button', { name: '确定' }).click();
  await page.getByText('操作成功').waitFor();
  await page.goto(url); // what a settled wait that opens the page again did
  await sleep(1200);
  assert.deepEqual(written, [], 'the vendor dropped the write');
  await page.close();
});

test("settle waits until the commit click's request is answered, so the write lands before the page is left", async () => {
  const { url } = await server();
  written.length = 0;
  const page = await browser.context.newPage();
  await page.goto(url);
  const watch = watchCommitRequests(browser.context, new URL(url).origin);
  await page.getByRole('button', { name: '确定' }).click();
  const settled = await watch.settle(5000);
  watch.stop();
  assert.deepEqual(settled.unanswered, []);
  assert.deepEqual(written, ['write'], 'answered before settle returned');
  await page.goto(url);
  await page.close();
});

test('settle gives up at its time and names the requests still unanswered', async () => {
  const { url } = await server();
  const page = await browser.context.newPage();
  await page.goto(url);
  const watch = watchCommitRequests(browser.context, new URL(url).origin);
  await page.getByRole('button', { name: '挂起' }).click();
  const settled = await watch.settle(800);
  watch.stop();
  assert.deepEqual(settled.unanswered, ['POST /hang']);
  assert.ok(settled.waitedMs >= 700, `waited ${settled.waitedMs} ms`);
  await page.close();
});
