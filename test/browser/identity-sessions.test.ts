import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { closeServer } from '../../src/http/listen.js';
import type { BrowserContext } from 'playwright-core';
import { dialogPolicy, dialogsSeen, runStep } from '../../src/browser/executor.js';
import { IdentitySessions, type OpenedSession } from '../../src/browser/identity-sessions.js';
import { paceContext, pacePage } from '../../src/browser/request-pace.js';
import { withSession } from '../../src/app/sessions.js';
import { MemorySessionSlots, slotConfig } from '../app/memory-session-slots.js';
import { SessionLostError } from '../../src/domain/errors.js';
import { readZip } from '../../src/lib/zip.js';
import { loadSitePack } from '../../src/sitepack/load.js';
import { credentialsFor, useTestSimulator } from '../backoffices/simulator/helpers.js';

const pack = loadSitePack('sitepacks/vendor-sim.yaml');
const ACME = 'svc-recon-acme';
const GLOBEX = 'svc-recon-globex';

describe('identity sessions: kept contexts per identity and purpose', () => {
  const t = useTestSimulator();
  const store = () => new IdentitySessions(sharedBrowser, pack, t.url);
  const listUrl = (tenant: string) => `${t.url}/diff/list?tenant=${tenant}&status=all&page_size=100`;

  test('a succeeded task hands its context to the next task of the same identity and purpose, blank and without its dialogs', async () => {
    const sessions = store();
    const first = await sessions.open(ACME, credentialsFor('acme'), 'read', { trace: false });
    await first.page.goto(listUrl('acme'));
    dialogPolicy(first.page).seen.push({ type: 'confirm', message: 'left over', accepted: false, expected: false });
    await first.close();

    const second = await sessions.open(ACME, credentialsFor('acme'), 'read', { trace: false });
    assert.equal(second.context, first.context, 'the kept context is reused');
    assert.equal(second.page.url(), 'about:blank', 'the next task starts on a blank page');
    assert.deepEqual(dialogsSeen(second.page), [], 'dialogs of the previous task are not reported again');
    await second.page.goto(listUrl('acme'));
    assert.match(second.page.url(), /\/diff\/list/, 'the kept vendor session still works');

    const readback = await sessions.open(ACME, credentialsFor('acme'), 'readback', { trace: false });
    assert.notEqual(readback.context, second.context, 'a readback never uses a read or write context');
    const otherTenant = await sessions.open(GLOBEX, credentialsFor('globex'), 'read', { trace: false });
    assert.notEqual(otherTenant.context, second.context, 'identities never share a context');
    const cookie = async (s: typeof second) => (await s.context.cookies()).map((c) => c.value).join();
    assert.notEqual(await cookie(readback), await cookie(second), 'the readback holds a vendor session of its own');

    for (const s of [second, readback, otherTenant]) await s.close();
    assert.deepEqual(
      sessions.stats,
      { contextsCreated: 3, reused: 1, logins: 3 },
      'three contexts (each logged in once), one of them reused',
    );
    await sessions.closeIdle();
  });

  test('reading the pre-state and writing share one login, a readback logs in on its own; warming keeps a context per purpose', async () => {
    const sessions = store();
    await sessions.warm(ACME, credentialsFor('acme'), ['read', 'write', 'readback']);
    assert.deepEqual(sessions.stats, { contextsCreated: 3, reused: 0, logins: 2 }, 'three contexts, two logins (read+write, readback)');
    const write = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: false });
    const read = await sessions.open(ACME, credentialsFor('acme'), 'read', { trace: false });
    const readback = await sessions.open(ACME, credentialsFor('acme'), 'readback', { trace: false });
    assert.equal(sessions.stats.reused, 3, 'every purpose found its warmed context');
    assert.notEqual(write.context, read.context, 'each purpose still has its own context');
    const cookie = async (x: typeof write) => (await x.context.cookies()).map((c) => c.value).join();
    assert.equal(await cookie(write), await cookie(read), 'read and write act on one vendor login');
    assert.notEqual(await cookie(readback), await cookie(write), 'the readback holds a vendor session of its own');
    await write.page.goto(listUrl('acme'));
    assert.match(write.page.url(), /\/diff\/list/, 'the shared login works for the write');
    for (const x of [write, read, readback]) await x.close();
    await sessions.warm(ACME, credentialsFor('acme'), ['write']);
    assert.equal(sessions.stats.contextsCreated, 3, 'warming a purpose that has a kept context opens nothing');
    await sessions.closeIdle();
  });

  test("a failed task's context is closed, not reused; concurrent tasks get separate contexts", async () => {
    const sessions = store();
    const a = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: false });
    const b = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: false });
    assert.notEqual(a.context, b.context, 'two tasks in flight never share a context');
    a.discardOnClose();
    await a.close();
    await b.close();
    const c = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: false });
    assert.equal(c.context, b.context);
    const d = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: false });
    assert.notEqual(d.context, a.context, "the failed task's context is gone");
    assert.equal(a.context.pages().length, 0);
    await c.close();
    await d.close();
    await sessions.closeIdle();
  });

  test('a kept context is reused without a probe; a session gone on its first page logs in again and starts over, once, never after acting', async () => {
    const sessions = store();
    const services = {
      sessions,
      secret: async () => credentialsFor('acme'),
      sessionSlots: new MemorySessionSlots(Date.now),
      config: slotConfig(),
    };
    const ctx = { baseUrl: t.url, params: {}, sessionLost: pack.sessionLost, traced: false };
    const openList = (session: OpenedSession) => runStep(session.page, { action: 'open', url: '/diff/list?tenant=acme&status=all' }, ctx);
    await withSession(services, ACME, 'read', { trace: false, tenant: 'acme' }, openList);
    const loginsBefore = sessions.stats.logins;

    await t.ctl.reset(); // drops every vendor session
    const requestsBefore = (await t.ctl.timings()).length;
    const attempts: Array<{ reused: boolean; context: BrowserContext }> = [];
    await withSession(services, ACME, 'read', { trace: false, tenant: 'acme' }, async (session) => {
      attempts.push({ reused: session.reused, context: session.context });
      await openList(session);
    });
    assert.deepEqual(
      attempts.map((a) => a.reused),
      [true, false],
      'the kept context first; after its session showed gone, a new one',
    );
    assert.notEqual(attempts[1]!.context, attempts[0]!.context);
    assert.equal(sessions.stats.logins, loginsBefore + 1, 'logged in again once');
    const paths = (await t.ctl.timings()).slice(requestsBefore).map((r) => `${r.method} ${r.path}`);
    assert.equal(
      paths[0],
      'GET /diff/list?tenant=acme&status=all',
      `the work's own page first, no probe before reuse: ${paths.join(', ')}`,
    );
    assert.equal(paths.filter((p) => p === 'POST /login').length, 1, paths.join(', '));
    assert.equal(paths.at(-1), 'GET /diff/list?tenant=acme&status=all', 'then the work again, logged in');

    await t.ctl.reset();
    let tries = 0;
    await assert.rejects(
      withSession(services, ACME, 'read', { trace: false, tenant: 'acme' }, async (session) => {
        tries += 1;
        session.markActed();
        await openList(session);
      }),
      SessionLostError,
    );
    assert.equal(tries, 1, 'work that acted is never started over');

    tries = 0;
    await assert.rejects(
      withSession(services, ACME, 'read', { trace: false, tenant: 'acme' }, async () => {
        tries += 1;
        throw new SessionLostError('the vendor says "会话已过期，请重新登录"');
      }),
      SessionLostError,
    );
    assert.equal(tries, 1, 'a session that was just logged in is not tried again');
    await sessions.closeIdle();
  });

  test('each traced task gets a trace of its own requests only, on a reused context', async () => {
    const sessions = store();
    const first = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: true });
    await first.page.goto(`${t.url}/diff/list?tenant=acme&status=PENDING&page_size=100&first=1`);
    const firstTrace = await first.close();
    const second = await sessions.open(ACME, credentialsFor('acme'), 'write', { trace: true });
    assert.equal(second.context, first.context);
    await second.page.goto(`${t.url}/diff/list?tenant=acme&status=PENDING&page_size=100&second=1`);
    const secondTrace = await second.close();
    const network = (trace: Buffer | undefined) => readZip(trace!).get('trace.network')!.toString('utf8');
    assert.match(network(firstTrace), /first=1/);
    assert.match(network(secondTrace), /second=1/);
    assert.doesNotMatch(network(secondTrace), /first=1/, "the previous task's requests are not in this trace");
    await sessions.closeIdle();
  });

  test('a kept context reads the server again, never its HTTP cache', async () => {
    let version = 'v1';
    const cacheable = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'max-age=3600' });
      res.end(`<p id="v">${version}</p>`);
    });
    await new Promise<void>((r) => cacheable.listen(0, '127.0.0.1', r));
    after(() => closeServer(cacheable));
    const url = `http://127.0.0.1:${(cacheable.address() as AddressInfo).port}/status`;
    const sessions = store();
    const first = await sessions.open(ACME, credentialsFor('acme'), 'readback', { trace: false });
    await first.page.goto(url);
    assert.equal(await first.page.textContent('#v'), 'v1');
    await first.close();
    version = 'v2';
    const second = await sessions.open(ACME, credentialsFor('acme'), 'readback', { trace: false });
    assert.equal(second.context, first.context);
    await second.page.goto(url);
    assert.equal(await second.page.textContent('#v'), 'v2', 'a cached v1 would be a stale readback');
    await second.close();
    await sessions.closeIdle();
  });
});

describe('request pace in the browser', () => {
  // A page with a script, a stylesheet, a frame and one call of its own: what a pace counts of it, and that it waits.
  const server = createServer((req, res) => {
    const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
    const ext = Object.keys(types).find((e) => req.url?.endsWith(e));
    if (ext) return res.writeHead(200, { 'content-type': types[ext]! }).end(ext === '.js' ? 'window.loaded = true;' : 'p{}');
    if (req.url?.startsWith('/api/')) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (req.url === '/frame') return res.writeHead(200, { 'content-type': 'text/html' }).end('<p>frame</p>');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<link rel="stylesheet" href="/static/s.css"><script src="/static/a.js"></script><iframe src="/frame"></iframe>
<script>fetch('/api/one').then((r) => r.json()).then((j) => { window.called = j.ok; });</script>`);
  });
  // The suite above closed the shared browser when it ended; this one launches it again, so it closes it too (a browser
  // left open keeps the file's process alive).
  after(async () => {
    await closeSharedBrowser();
    await closeServer(server);
  });

  const paced = async (pacing: { paths?: string[]; assets: boolean }) => {
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const context = await (await sharedBrowser()).newContext();
    const taken: number[] = [];
    const work = { tally: undefined };
    // A pace that lets each request go at once and counts it: what the browser handed to it.
    const pace = { origin, ...pacing, work, take: async () => taken.push(Date.now()) && 0 };
    paceContext(context, pace);
    const page = await context.newPage();
    await pacePage(context, page, pace);
    await page.goto(`${origin}/page`);
    await page.waitForFunction(() => (window as unknown as { called?: boolean }).called === true);
    assert.equal(await page.evaluate(() => (window as unknown as { loaded?: boolean }).loaded), true, 'the script ran');
    await context.close();
    return taken.length;
  };

  test('by default the page, its frame and its own call count; scripts and styles never reach the pace', async () => {
    assert.equal(await paced({ assets: false }), 3);
  });
  test('paths narrow it to the calls the vendor counts; assets: true counts every request', async () => {
    assert.equal(await paced({ paths: ['/api/'], assets: false }), 1);
    assert.equal(await paced({ assets: true }), 5);
  });
});
