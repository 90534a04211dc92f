import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromiumArgs, closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';

after(closeSharedBrowser);

test('the unsafe defaults of the Lambda build are not used', () => {
  const args = chromiumArgs();
  for (const flag of ['--single-process', '--disable-web-security', '--disable-site-isolation-trials']) {
    assert.ok(!args.includes(flag), `${flag} must be dropped`);
  }
  assert.ok(!args.some((a) => a.includes('site-per-process')), 'site isolation stays on');
});

test("contexts of one shared browser do not see each other's cookies or storage", async () => {
  const server = createServer((req, res) => {
    if (req.url === '/set') res.setHeader('set-cookie', 'sid=tenant-a; Path=/');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<p id="c">${req.headers.cookie ?? 'none'}</p>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const browser = await sharedBrowser();
    assert.equal(browser, await sharedBrowser(), 'the same browser is reused');
    const a = await browser.newContext();
    const b = await browser.newContext();
    const pa = await a.newPage();
    await pa.goto(`${base}/set`);
    await pa.evaluate(() => localStorage.setItem('k', 'tenant-a'));
    await pa.goto(`${base}/read`);
    assert.equal(await pa.textContent('#c'), 'sid=tenant-a');
    const pb = await b.newPage();
    await pb.goto(`${base}/read`);
    assert.equal(await pb.textContent('#c'), 'none');
    assert.equal(await pb.evaluate(() => localStorage.getItem('k')), null);
    await a.close();
    await b.close();
  } finally {
    server.close();
  }
});
