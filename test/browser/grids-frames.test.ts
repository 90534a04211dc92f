import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { runSteps } from '../../src/browser/executor.js';
import type { RowBinding } from '../../src/browser/locate.js';
import { pageSession, type OpenedSession } from '../../src/browser/identity-sessions.js';
import { SitePack } from '../../src/sitepack/schema.js';
import { readItem, readList, type ReadContext } from '../../src/browser/vendor-reads.js';
import { ListIncompleteError } from '../../src/domain/errors.js';
import { BILLS, startGridPages, type GridPages } from './grid-pages.js';
import { deadline, pollUntil } from '../../src/lib/deadline.js';

/** The journal's entries after `before`, once `count` have arrived: a page posts its entry after the click returns. */
async function journalSince(
  journal: Array<Record<string, unknown>>,
  before: number,
  count: number,
): Promise<Array<Record<string, unknown>>> {
  await pollUntil(deadline(10_000), async () => journal.length - before >= count, 50);
  return journal.slice(before);
}

/**
 * Tables, grids and frames as real back offices draw them (test/browser/grid-pages.ts), read and acted on through
 * the functions a batch, a readback and a guarded write use. One browser for the file, a new context per test.
 */

function pack(overrides: Record<string, unknown>): SitePack {
  return SitePack.parse({
    version: 2,
    site: 'grids',
    description: 'grid and frame pages',
    itemKeyPattern: '^N-\\d{4}$',
    login: {
      url: '/login',
      steps: [{ action: 'click', target: { role: 'button', name: '登录' } }],
      loggedIn: { text: '你好' },
      probeUrl: '/portal',
    },
    sessionLost: { urlContains: ['/login'] },
    statuses: { 待处理: 'PENDING', 已处理: 'PROCESSED' },
    list: {
      steps: [{ action: 'open', url: '/thead-td' }],
      rows: { table: {} },
      key: { column: '单号' },
      fields: { status: { column: '状态' } },
    },
    actions: {},
    ...overrides,
  });
}

const PENDING = (no: string) => (BILLS.find((b) => b.no === no)!.status === '待处理' ? 'PENDING' : 'PROCESSED');

describe('tables, virtualising grids and frames', () => {
  let pages: GridPages;
  let context: BrowserContext;
  let session: OpenedSession;
  const ctx = (p: SitePack): ReadContext => ({ pack: p, baseUrl: pages.url, tenant: 'acme', timeoutMs: 5000 });
  const keys = async (p: SitePack) => (await readList(session, ctx(p))).map((row) => row.billNo);

  before(async () => {
    pages = await startGridPages();
  });
  after(async () => {
    await closeSharedBrowser();
    await pages?.close();
  });
  const fresh = async () => {
    await context?.close();
    context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 800 } });
    session = pageSession(context, await context.newPage());
  };
  /** Opens `url` and presses 处理 (a commit click) in the row of `key`, as a guarded write's steps do. */
  const pressInRow = async (url: string, rows: RowBinding['list']['rows'], key: string) => {
    const list = { rows, key: { column: '单号' } };
    await runSteps(
      session.page,
      [
        { action: 'open', url },
        { action: 'click', within: { row: true }, target: { role: 'button', name: '处理' }, commit: true },
      ],
      { baseUrl: pages.url, params: {}, row: { list, key }, sessionLost: pack({}).sessionLost, traced: false },
    );
  };

  test('a header row of <td> cells in <thead>, and the header repeated in a second <tbody>, are headers', async () => {
    await fresh();
    const p = pack({});
    const rows = await readList(session, ctx(p));
    assert.deepEqual(
      rows.map((r) => `${r.billNo}:${r.status}`),
      BILLS.slice(0, 5).map((b) => `${b.no}:${PENDING(b.no)}`),
      'five data rows, the repeated header row read as none of them',
    );
  });

  test('a fixed header drawn as its own table lends the body table its columns; a wrong column names the ones found', async () => {
    await fresh();
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/split-header' }],
        rows: { table: {} },
        key: { column: '单号' },
        fields: { status: { column: '状态' } },
      },
    });
    assert.deepEqual(await keys(p), ['N-0001', 'N-0002', 'N-0003', 'N-0004']);
    const wrong = pack({
      list: {
        steps: [{ action: 'open', url: '/split-header' }],
        rows: { table: {} },
        key: { column: '编号' },
        fields: { status: { column: '状态' } },
      },
    });
    await assert.rejects(
      readList(session, ctx(wrong)),
      /list\.key \(column "编号"\) read nothing in row 1 .*the columns are "单号", "状态"/,
    );
  });

  test('a div-based ARIA table: cells placed by aria-colindex, so a skipped cell does not shift the status', async () => {
    await fresh();
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/div-table' }],
        rows: { table: { name: '差异清单' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' }, note: { column: '备注' } },
      },
    });
    const rows = await readList(session, ctx(p));
    assert.deepEqual(
      rows.map((r) => [r.billNo, r.status, r.fields['note']]),
      [
        ['N-0001', 'PROCESSED', '备注0'],
        ['N-0002', 'PENDING', undefined],
        ['N-0003', 'PENDING', '备注2'],
      ],
    );
  });

  test('a virtualising grid is scrolled until every row was seen, each row once, in order', async () => {
    await fresh();
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/virtual' }],
        rows: { table: { name: '差异' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' } },
      },
    });
    const rows = await readList(session, ctx(p));
    assert.deepEqual(
      rows.map((r) => r.billNo),
      BILLS.map((b) => b.no),
    );
    assert.deepEqual(
      rows.map((r) => r.status),
      BILLS.map((b) => PENDING(b.no)),
    );
  });

  test('a list short of the total its page states is a named error with both numbers, never a short list', async () => {
    await fresh();
    const short = pack({
      list: {
        steps: [{ action: 'open', url: '/short' }],
        rows: { table: {} },
        key: { column: '单号' },
        fields: { status: { column: '状态' } },
        total: { pattern: '共\\s*(\\d+)\\s*条' },
      },
    });
    await assert.rejects(
      readList(session, ctx(short)),
      (error: Error) =>
        error instanceof ListIncompleteError &&
        error.stated === 30 &&
        error.read === 20 &&
        /states 30 rows \(list\.total .*\) but 20 were read/.test(error.message),
    );
    // The grid's own aria-rowcount, when a limit stops the scrolling: named with the limit to raise.
    const capped = pack({
      list: {
        steps: [{ action: 'open', url: '/virtual' }],
        rows: { table: { name: '差异' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' } },
        maxPages: 2,
      },
    });
    await assert.rejects(
      readList(session, ctx(capped)),
      /states 30 rows \(the grid's aria-rowcount 31, less 1 header row\(s\)\) but \d+ were read: reading stopped at list\.maxPages \(2\)/,
    );
    const badPattern = pack({
      list: { ...short.list, steps: [{ action: 'open', url: '/thead-td' }] },
    });
    await assert.rejects(readList(session, ctx(badPattern)), /list\.total \(\/共\\s\*\(\\d\+\)\\s\*条\/\) found no number on \/thead-td/);
  });

  test('a row of a virtualising grid is found by scrolling to it and acted on; through the grid filter box too', async () => {
    await fresh();
    const before = pages.journal.length;
    await pressInRow('/virtual', { table: { name: '差异', virtual: true } }, 'N-0027');
    await pressInRow('/virtual?filter=1', { table: { name: '差异', filter: { label: '筛选单号' } } }, 'N-0019');
    assert.deepEqual(await journalSince(pages.journal, before, 2), [
      { bill: 'N-0027', via: 'grid' },
      { bill: 'N-0019', via: 'grid' },
    ]);
  });

  test('a grid that redraws its rows as the click scrolls the row into view: the row is found again by its key, and that bill is pressed', async () => {
    await fresh();
    const before = pages.journal.length;
    await pressInRow('/virtual', { table: { name: '差异', virtual: true } }, 'N-0009');
    // N-0009 is drawn just below the grid's viewport: the click scrolls it into view, and the grid draws its rows anew.
    assert.deepEqual(await journalSince(pages.journal, before, 1), [{ bill: 'N-0009', via: 'grid' }]);
  });

  test('a grid that redraws a while after scrolling stops: the click waits for that redraw, so the press lands on the row drawn for good', async () => {
    await fresh();
    const before = pages.journal.length;
    // Not declared virtual: its aria-rowcount (31) above the rows it draws says so.
    await pressInRow('/virtual?debounce=120', { table: { name: '差异' } }, 'N-0009');
    // Playwright's own scroll-into-view would press at once, with the redraw still due (and able to take the click).
    assert.deepEqual(await journalSince(pages.journal, before, 2), [
      { press: true, redrawDue: false },
      { bill: 'N-0009', via: 'grid' },
    ]);
  });

  test('a list, a detail page and an action inside an iframe of a portal; the frame sent to login is session loss', async () => {
    await fresh();
    const frame = { title: '工作区' };
    const p = pack({
      list: {
        steps: [{ action: 'open', url: '/portal', waitFor: { role: 'table', name: '差异清单' } }],
        frame,
        rows: { table: { name: '差异清单' } },
        key: { column: '单号' },
        fields: { status: { column: '状态' } },
        total: { pattern: '共\\s*(\\d+)\\s*条' },
      },
      detail: {
        steps: [
          { action: 'open', url: '/portal' },
          { action: 'click', target: { role: 'link', name: '{{billNo}}', exact: true } },
        ],
        frame: { url: '^/work/' },
        status: { label: '处理状态' },
      },
    });
    assert.deepEqual(
      await keys(p),
      BILLS.slice(0, 5).map((b) => b.no),
    );
    assert.equal((await readItem('detail', { ...ctx(p), billNo: 'N-0002', session })).status, 'PENDING');

    const before = pages.journal.length;
    await runSteps(
      session.page,
      [
        { action: 'open', url: '/portal' },
        { action: 'click', within: { top: true }, target: { role: 'link', name: '差异清单' } },
        { action: 'click', within: { row: true }, target: { role: 'button', name: '处理' } },
        { action: 'click', within: { dialog: { name: '确认处理' } }, target: { role: 'button', name: '确认' }, commit: true },
        { action: 'wait_for', target: { role: 'dialog' }, state: 'hidden' },
      ],
      { baseUrl: pages.url, params: {}, frame, row: { list: p.list, key: 'N-0003' }, sessionLost: p.sessionLost, traced: false },
    );
    assert.deepEqual(await journalSince(pages.journal, before, 1), [{ bill: 'N-0003', via: 'frame' }]);

    const expired = pack({ list: { ...p.list, steps: [{ action: 'open', url: '/portal?expired=1' }] } });
    await assert.rejects(
      readList(session, ctx(expired)),
      (error: Error) => error.name === 'SessionLostError' && /frame "work" to \/login/.test(error.message),
    );
    const missing = pack({ list: { ...p.list, frame: { name: '不存在' } } });
    await assert.rejects(
      readList(session, ctx(missing)),
      /the frame named "不存在" is not on \/portal \(its frames: name "work" title "工作区" at \/work\/list\)/,
    );
    await context.close();
  });
});
