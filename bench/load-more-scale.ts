import { createServer } from 'node:http';
import type { Locator } from 'playwright-core';
import type { AddressInfo } from 'node:net';
import { readList } from '../src/browser/vendor-reads.js';
import { closeSharedBrowser, sharedBrowser } from '../src/browser/chromium.js';
import { pageSession } from '../src/browser/identity-sessions.js';
import { devtoolsOf } from '../src/browser/quiet-page.js';
import { SitePack } from '../src/sitepack/schema.js';
import { runStandalone } from './standalone.js';

/**
 * ReadList on a long list paged by "load more": a table of `rows` rows, `per`
 * more per press after a short wait, the whole table redrawn after each press
 * (as single-page apps do, so for a moment the old rows are gone), read by the
 * same readList a batch uses, in a real Chromium. Counted on the page's
 * DevTools session, through which the table reads go (quiet-page.ts): the page
 * evaluations and the rows they returned.
 */

export interface LoadMoreReport {
  rows: number;
  perPress: number;
  presses: number;
  /** Distinct keys read, and rows in the answer (equal: each key once). */
  keys: number;
  rowsInAnswer: number;
  /** Rows the page returned over all evaluations (equal to `rows`: each row read once). */
  rowsReturned: number;
  evaluations: number;
  /**
   * Calls on the load-more button's locator (each resolves it: a walk of the whole page computing roles and
   * names). Before, three a press (visible, enabled, click); the button is now found once and pressed as an element.
   */
  buttonLookups: number;
  pendingRows: number;
  wallMs: number;
}

function longListPage(n: number, per: number): string {
  return `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>后台</title></head><body>
<table aria-label="对账单"><thead><tr><th>单号</th><th>状态</th></tr></thead><tbody id="rows"></tbody></table>
<button type="button" id="more">加载更多</button>
<script>
const n = ${n}, per = ${per}; let shown = Math.min(per, n);
const draw = () => {
  const rows = [];
  for (let i = 1; i <= shown; i++) rows.push('<tr><td>N-' + String(i).padStart(5, '0') + '</td><td>' + (i % 2 ? '待处理' : '已处理') + '</td></tr>');
  document.getElementById('rows').innerHTML = rows.join('');
  if (shown >= n) document.getElementById('more').remove();
};
document.getElementById('more').onclick = () => {
  document.getElementById('rows').innerHTML = '';
  setTimeout(() => { shown = Math.min(shown + per, n); draw(); }, 30);
};
draw();
</script></body></html>`;
}

function packFor(rows: number, per: number): SitePack {
  return SitePack.parse({
    version: 2,
    site: 'long-list',
    description: 'a long list paged by load more',
    itemKeyPattern: '^N-\\d{5}$',
    login: {
      url: '/login',
      steps: [{ action: 'click', target: { role: 'button', name: '登录' } }],
      loggedIn: { text: 'x' },
      probeUrl: '/api/bills',
    },
    sessionLost: { urlContains: ['/login'] },
    statuses: { 待处理: 'PENDING', 已处理: 'PROCESSED' },
    list: {
      steps: [{ action: 'open', url: `/list?n=${rows}&per=${per}` }],
      rows: { table: { name: '对账单' } },
      key: { column: '单号' },
      fields: { status: { column: '状态' } },
      paging: { loadMore: { role: 'button', name: '加载更多' } },
      maxPages: 100,
    },
    actions: {},
  });
}

export async function measureLoadMore(options: { rows: number; perPress: number }): Promise<LoadMoreReport> {
  const { rows, perPress } = options;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://list');
    if (url.pathname !== '/list') return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(longListPage(Number(url.searchParams.get('n')), Number(url.searchParams.get('per'))));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const context = await (await sharedBrowser()).newContext();
  try {
    const page = await context.newPage();
    const session = pageSession(context, page);
    const cdp = await devtoolsOf(page);
    const send = cdp.send.bind(cdp);
    let evaluations = 0;
    let rowsReturned = 0;
    (cdp as { send: unknown }).send = async (method: string, params?: unknown) => {
      const answer = (await send(method as never, params as never)) as { result?: { value?: { rows?: unknown[] } } };
      if (method === 'Runtime.evaluate') {
        evaluations += 1;
        rowsReturned += answer?.result?.value?.rows?.length ?? 0;
      }
      return answer;
    };
    const lookups = countButtonLookups(page.locator('body'));
    const started = performance.now();
    const read = await readList(session, { pack: packFor(rows, perPress), baseUrl, tenant: 'acme', timeoutMs: 10_000 }).finally(
      lookups.stop,
    );
    const wallMs = Math.round(performance.now() - started);
    (cdp as { send: unknown }).send = send;
    return {
      rows,
      perPress,
      presses: Math.ceil(rows / perPress) - 1,
      keys: new Set(read.map((r) => r.billNo)).size,
      rowsInAnswer: read.length,
      rowsReturned,
      evaluations,
      buttonLookups: lookups.count(),
      pendingRows: read.filter((r) => r.status === 'PENDING').length,
      wallMs,
    };
  } finally {
    await context.close();
    await new Promise<void>((done) => server.close(() => done()));
  }
}

/**
 * Counts the calls that resolve the load-more button's role locator (any locator method on a locator that
 * names the button), by wrapping Playwright's Locator methods for the duration of one read.
 */
function countButtonLookups(sample: Locator): { count(): number; stop(): void } {
  const proto = Object.getPrototypeOf(sample) as Record<string, unknown>;
  const methods = ['isVisible', 'isEnabled', 'click', 'count', 'elementHandle', 'waitFor'] as const;
  const originals = new Map(methods.map((m) => [m, proto[m] as (...args: unknown[]) => unknown]));
  let calls = 0;
  for (const [name, original] of originals) {
    proto[name] = function (this: Locator, ...args: unknown[]) {
      if (String(this).includes("getByRole('button', { name: '加载更多'")) calls += 1;
      return original.apply(this, args);
    };
  }
  return {
    count: () => calls,
    stop: () => {
      for (const [name, original] of originals) proto[name] = original;
    },
  };
}

/** `npx tsx bench/load-more-scale.ts [rows] [per press]`: the measurement alone, printed as JSON. */
runStandalone(
  import.meta.url,
  ([rows, perPress]) => measureLoadMore({ rows: Number(rows ?? 10_000), perPress: Number(perPress ?? 100) }),
  closeSharedBrowser,
);
