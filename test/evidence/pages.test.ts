import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { S3rverFolderBucket } from '../../src/evidence/bucket.js';
import { startEvidenceServer, type EvidenceServer } from '../../src/evidence/server.js';
import { startHarness, type Harness } from '../support/embedded.js';

/**
 * The evidence pages after a real batch (3 pending bills, one of them a
 * "toast but nothing changed" write that goes to takeover), opened in the
 * shared browser: through the bucket browser, and from a folder synced to
 * disk with no server at all.
 */
const TASK = 'T-evidence-pages';
const SCREENSHOTS = join(tmpdir(), 'paperclip-evidence-pages');

function rawStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('evidence pages of a real batch', () => {
  let h: Harness;
  let server: EvidenceServer;
  let batchUrl: string;
  let itemKeys: string[];

  before(async () => {
    h = await startHarness();
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
    await h.control.addFault({ kind: 'half_success', bill: 'ACME-202611-0002', times: 1 });
    const run = await h.paperclip.runBatch({ taskId: TASK, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.done, 2);
    assert.equal(run.summary?.counts.takeover, 1);
    itemKeys = (await h.paperclip.services.claims.byTask(TASK)).map((c) => c.key).sort();
    const bucketDir = join(h.dataDir, 's3', h.paperclip.services.config.evidence.bucket);
    server = await startEvidenceServer({ reader: new S3rverFolderBucket(bucketDir), port: 0 });
    batchUrl = `${server.url}/evidence/acme/${TASK}/index.html`;
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    await server?.stop();
    await closeSharedBrowser();
    await h?.stop();
  });

  /** Every src and href on the page, resolved against the page's URL. */
  async function references(page: Page): Promise<string[]> {
    return page.evaluate(() =>
      Array.from(document.querySelectorAll('[src], [href]'))
        .map((el) => (el as HTMLImageElement).src || (el as HTMLAnchorElement).href)
        .filter(Boolean),
    );
  }

  async function imagesLoaded(page: Page): Promise<Array<{ src: string; width: number }>> {
    return page.evaluate(async () => {
      const images = Array.from(document.images);
      await Promise.all(
        images.map((img) => (img.complete ? undefined : new Promise((r) => img.addEventListener('load', r, { once: true })))),
      );
      return images.map((img) => ({ src: img.src, width: img.naturalWidth }));
    });
  }

  /**
   * Two different CJK characters drawn in the page's font: if the font had no
   * CJK glyphs both would be the same fallback box.
   */
  async function cjkGlyphsDiffer(page: Page): Promise<boolean> {
    // A string, not a function: the test transpiler would add helpers the page does not have.
    return page.evaluate(`(() => {
      const font = '32px ' + getComputedStyle(document.body).fontFamily;
      const shots = ['批', '次', '\u{10FFFD}'].map((ch) => {
        const canvas = document.createElement('canvas');
        canvas.width = 40;
        canvas.height = 40;
        const ctx = canvas.getContext('2d');
        ctx.font = font;
        ctx.fillText(ch, 2, 32);
        return canvas.toDataURL();
      });
      return shots[0] !== shots[1] && shots[0] !== shots[2];
    })()`);
  }

  test('the batch page links every item with its outcome; images load, every link resolves, nothing leaves 127.0.0.1', async () => {
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url)) foreign.push(r.url());
    });
    try {
      const response = await page.goto(batchUrl);
      assert.equal(response?.status(), 200);
      const text = await page.locator('body').innerText();
      assert.match(text, /批次 Batch T-evidence-pages/);
      for (const bill of ['ACME-202611-0001', 'ACME-202611-0002', 'ACME-202611-0003']) assert.ok(text.includes(bill), `${bill} listed`);
      const rows = await page.locator('table').nth(1).locator('tr').allInnerTexts();
      assert.match(rows.find((r) => r.includes('ACME-202611-0002'))!, /takeover/);
      assert.match(rows.find((r) => r.includes('ACME-202611-0001'))!, /done/);
      const links = await references(page);
      for (const key of itemKeys) assert.ok(links.includes(`${server.url}/evidence/acme/${TASK}/${key}/index.html`), `links ${key}`);
      const images = await imagesLoaded(page);
      assert.ok(images.length >= 1);
      for (const image of images) assert.ok(image.width > 0, `${image.src} rendered`);
      for (const link of links) {
        const status = (await fetch(link, { method: 'HEAD' })).status;
        assert.equal(status, 200, `${link} resolves`);
      }
      assert.ok(await cjkGlyphsDiffer(page), 'the page font has CJK glyphs');
      await page.screenshot({ path: join(SCREENSHOTS, 'batch.png'), fullPage: true });
      assert.deepEqual(foreign, [], 'nothing is loaded from anywhere else');
    } finally {
      await context.close();
    }
  });

  test('each item page shows the timeline with screenshots, the record fields, the trace and every sha256; all links resolve', async () => {
    const context = await (await sharedBrowser()).newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    try {
      for (const key of itemKeys) {
        const url = `${server.url}/evidence/acme/${TASK}/${key}/index.html`;
        assert.equal((await page.goto(url))?.status(), 200);
        const text = await page.locator('body').innerText();
        for (const field of [
          '身份 Identity',
          '租户 Tenant',
          '单号 Bill',
          '动作 Action',
          '幂等键 Idempotency key',
          '执行 Execution',
          '层级 Tier',
          '回读结论 Readback verdict',
        ]) {
          assert.ok(text.includes(field), `${key}: ${field}`);
        }
        assert.ok(text.includes(key) && text.includes('svc-recon-acme') && text.includes('mark_processed'));
        assert.ok(text.includes('npx playwright show-trace trace.zip'));
        for (const phase of ['幂等占位 Claimed', '操作前快照', '执行写入', '操作后 After', '独立回读 Readback'])
          assert.ok(text.includes(phase), `${key}: timeline has ${phase}`);
        const srcs = (await imagesLoaded(page)).map((i) => ({ ...i, name: i.src.split('/').at(-1) }));
        for (const name of ['before.png', 'after.png']) {
          const image = srcs.find((i) => i.name === name);
          assert.ok(image && image.width > 0, `${key}: ${name} inline and loaded`);
        }
        // Moments the default policy records without a picture say where their record is instead; a readback that
        // is not confirmed (the half success) keeps the page it read.
        const confirmed = (await h.paperclip.services.claims.get(key))?.status === 'DONE';
        assert.ok(!srcs.some((i) => i.name === 'before-commit.png'), `${key}: a traced reversible write has no before-commit picture`);
        assert.ok(text.includes('The page just before the commit click is the DOM snapshot of that click in trace.zip.'), key);
        assert.equal(
          srcs.some((i) => i.name === 'readback.png' && i.width > 0),
          !confirmed,
          `${key}: readback.png only when not confirmed`,
        );
        assert.equal(
          text.includes('A confirmed readback of a settled write: its observations above and after.png record it'),
          confirmed,
          key,
        );
        const objects = await h.paperclip.services.evidence.list(`evidence/acme/${TASK}/${key}/`);
        for (const object of objects.filter((o) => !o.endsWith('/index.html'))) {
          const body = (await h.paperclip.services.evidence.get(object))!;
          const sha = (await import('node:crypto')).createHash('sha256').update(body).digest('hex');
          assert.ok(text.includes(sha), `${object}: its sha256 is on the page`);
        }
        for (const link of await references(page))
          assert.equal((await fetch(link, { method: 'HEAD' })).status, 200, `${key}: ${link} resolves`);
        assert.ok(await cjkGlyphsDiffer(page));
      }
      const takeover = (await h.paperclip.services.claims.byTask(TASK)).find((c) => c.billNo === 'ACME-202611-0002')!;
      await page.goto(`${server.url}/evidence/acme/${TASK}/${takeover.key}/index.html`);
      const text = await page.locator('body').innerText();
      assert.match(text, /人工接管 Human takeover/);
      assert.match(text, /false success/);
      const shots = (await imagesLoaded(page)).map((i) => i.src.split('/').at(-1));
      assert.ok(shots.includes('readback.png'), 'a readback that found a false success shows the page it read');
      assert.doesNotMatch(text, /A confirmed readback of a settled write/);
      await page.screenshot({ path: join(SCREENSHOTS, 'item-takeover.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  test('a batch folder synced to disk opens offline: relative links, images load without any server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paperclip-synced-'));
    const { evidence } = h.paperclip.services;
    const prefix = `evidence/acme/${TASK}/`;
    try {
      for (const key of await evidence.list(prefix)) {
        const path = join(dir, key.slice(prefix.length));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, (await evidence.get(key))!);
      }
      const context = await (await sharedBrowser()).newContext({ offline: true });
      const page = await context.newPage();
      try {
        await page.goto(`file://${join(dir, 'index.html')}`);
        for (const image of await imagesLoaded(page)) assert.ok(image.width > 0, `${image.src} loads from disk`);
        await page.locator(`a[href="${itemKeys[0]}/index.html"]`).first().click();
        assert.ok(page.url().endsWith(`${itemKeys[0]}/index.html`));
        const images = await imagesLoaded(page);
        assert.ok(images.length >= 2, 'before and after at least');
        for (const image of images) assert.ok(image.width > 0, `${image.src} loads from disk`);
        await page.screenshot({ path: join(SCREENSHOTS, 'item-offline.png'), clip: { x: 0, y: 0, width: 1200, height: 900 } });
      } finally {
        await context.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the bucket browser lists folders, serves objects as stored, and refuses paths out of the bucket and writes', async () => {
    const listing = await (await fetch(`${server.url}/evidence/acme/`)).text();
    assert.ok(listing.includes(`${TASK}/`));
    const folder = await fetch(`${server.url}/evidence/acme/${TASK}/`);
    assert.equal(folder.status, 200);
    const html = await folder.text();
    for (const name of ['batch.json', 'list.png', 'seal.json', 'index.html', ...itemKeys.map((k) => `${k}/`)])
      assert.ok(html.includes(name), `listing shows ${name}`);
    const png = await fetch(`${server.url}/evidence/acme/${TASK}/list.png`);
    assert.equal(png.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await png.arrayBuffer()), await h.paperclip.services.evidence.get(`evidence/acme/${TASK}/list.png`));
    assert.equal((await fetch(`${server.url}/evidence/acme/${TASK}`, { redirect: 'manual' })).status, 301);
    // Raw paths: fetch() would normalise the dot segments away before sending.
    assert.equal(await rawStatus(server.port, '/evidence/../../dynamodb/'), 400);
    assert.equal(await rawStatus(server.port, '/evidence/%2e%2e/%2e%2e/dynamodb/'), 400);
    assert.equal((await fetch(`${server.url}/evidence/acme/${TASK}/batch.json`, { method: 'PUT', body: '{}' })).status, 405);
    assert.equal((await fetch(`${server.url}/evidence/acme/nope.png`)).status, 404);
  });
});
