import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { type PageServer, startPageServer } from '../support/page-server.js';

/**
 * Small back-office pages for the site-pack patterns, each in the shape real
 * admin UIs take: generated class names, no data-* attributes, client-side
 * rendering, hash routes, role-less modals. Writes land in `journal`.
 */

const BILLS = [
  { no: 'N-7001', status: '待处理', kind: '金额不符', amount: '¥1,234.50', org: '华东一部' },
  { no: 'N-7002', status: '已处理', kind: '重复扣款', amount: '¥88.00', org: '华东一部' },
  { no: 'N-7003', status: '审核中', kind: '金额不符', amount: '¥10.00', org: '华北二部' },
];

const page = (body: string, script = '') =>
  `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>后台</title><style>.x9f{position:fixed;inset:0;background:#0004}.k2{background:#fff;margin:10% auto;width:320px;padding:12px}</style></head><body>${body}<script>${script}</script></body></html>`;

/** A table whose columns are in another order than the pack lists them; two pages linked by 下一页. */
function tablePage(n: number): string {
  const rows = (n === 1 ? BILLS.slice(0, 2) : BILLS.slice(2))
    .map(
      (b) =>
        `<tr class="r_${b.no.length}"><td><span class="t1">${b.status}</span></td><td>${b.amount}</td><td>${b.no}</td><td>${b.kind}</td></tr>`,
    )
    .join('');
  const next = n === 1 ? '<a href="/table?page=2">下一页</a>' : '<span aria-disabled="true">下一页</span>';
  return page(
    `<table aria-label="对账单"><thead><tr><th>状态</th><th>金额</th><th>单号</th><th>类型</th></tr></thead><tbody>${rows}</tbody></table><nav>${next}</nav>`,
  );
}

/** An ARIA grid drawn by script after load: readers must wait for content, not for the load event. */
const GRID = page(
  '<div id="root">加载中…</div>',
  `setTimeout(() => { document.getElementById('root').innerHTML = '<div role="grid" aria-label="差异"><div role="row"><span role="columnheader">编号</span><span role="columnheader">当前状态</span></div>' +
  ${JSON.stringify(BILLS)}.map((b) => '<div role="row"><span role="gridcell">' + b.no + '</span><span role="gridcell">' + b.status + '</span></div>').join('') + '</div>'; }, 300);`,
);

/** Role-less cards with labels inside, one more card per press of 加载更多. */
const CARDS = page(
  '<div id="list"></div><button type="button" id="more">加载更多</button>',
  `const bills = ${JSON.stringify(BILLS)}; let shown = 1;
  const draw = () => { document.getElementById('list').innerHTML = bills.slice(0, shown).map((b) =>
    '<div class="c_' + b.no.slice(2) + '"><div class="h7"><span class="lb">单号：</span><span>' + b.no + '</span></div><div><span class="lb">状态</span><b>' + b.status + '</b></div><p>归属 ' + b.org + '</p></div>').join('');
    if (shown >= bills.length) document.getElementById('more').remove(); };
  document.getElementById('more').onclick = () => setTimeout(() => { shown += 1; draw(); }, 100); draw();`,
);

/** Rows are visible but carry no column the pack names. */
const BROKEN = page(
  `<table aria-label="对账单"><thead><tr><th>Bill</th><th>State</th></tr></thead><tbody>${BILLS.map((b) => `<tr><td>${b.no}</td><td>${b.status}</td></tr>`).join('')}</tbody></table>`,
);

/**
 * An admin-framework table: its header row is made of <td> cells inside <thead>
 * (no <th>, no roles), and the body repeats a header row of bold <td> cells
 * before each group, as printed-report tables do.
 */
const REPEATED_HEADER = '<tr class="hd"><th>单号</th><th>组织</th><th>金额</th><th>状态</th></tr>';
const TD_HEADERS = page(
  `<table aria-label="对账单"><thead><tr><td><b>单号</b></td><td><b>组织</b></td><td><b>金额</b></td><td><b>状态</b></td></tr></thead><tbody>${BILLS.map(
    (b, i) => `${i === 2 ? REPEATED_HEADER : ''}<tr><td>${b.no}</td><td>${b.org}</td><td>${b.amount}</td><td>${b.status}</td></tr>`,
  ).join('')}</tbody></table>`,
);

/**
 * A single-page app on hash routes. #/bills lists bills from a JSON call that
 * needs the session cookie; without it the app swallows the 401 and shows its
 * login route. #/bills/<no> shows a detail with labelled values, a row menu,
 * a role-less modal and a typed-amount confirmation.
 */
const SPA = page(
  '<div id="app"></div>',
  `const app = document.getElementById('app');
  const route = async () => {
    const hash = location.hash || '#/bills';
    if (hash === '#/login') { app.innerHTML = '<form><label>账号<input name="u"></label><label>密码<input type="password" name="p"></label><button type="button">登录</button></form>'; return; }
    const res = await fetch('/api/bills');
    if (res.status === 401) { if (location.hash !== '#/login-required') app.innerHTML = '<p>加载失败</p>'; return; }
    const bills = (await res.json()).items;
    const m = /^#\\/bills\\/(.+)$/.exec(hash);
    if (!m) {
      app.innerHTML = '<input placeholder="搜索单号" id="q"><button type="button" id="go">搜索</button><ul>' + bills.map((b) => '<li><a href="#/bills/' + b.no + '">' + b.no + '</a> <em>' + b.status + '</em> <button type="button" class="m">更多</button></li>').join('') + '</ul>';
      document.getElementById('go').onclick = () => { const q = document.getElementById('q').value; app.querySelectorAll('li').forEach((li) => { li.hidden = !li.textContent.includes(q); }); };
      app.querySelectorAll('button.m').forEach((btn, i) => btn.onclick = () => {
        const menu = document.createElement('div'); menu.setAttribute('role', 'menu');
        menu.innerHTML = '<div role="menuitem" tabindex="0">退款</div>'; document.body.appendChild(menu);
        menu.firstChild.onclick = () => { menu.remove(); openModal(bills[i]); };
      });
      return;
    }
    const b = bills.find((x) => x.no === decodeURIComponent(m[1]));
    app.innerHTML = '<h1>' + b.no + '</h1><dl><dt>处理状态</dt><dd>' + b.status + '</dd><dt>所属组织</dt><dd>' + b.org + '</dd></dl>';
  };
  const openModal = (b) => {
    const overlay = document.createElement('div'); overlay.className = 'x9f';
    overlay.innerHTML = '<div class="k2"><div class="t">确认退款</div><p>请输入金额 ' + b.amount + ' 以确认</p><input placeholder="输入金额"><div><button type="button" class="ok">确认</button><button type="button">取消</button></div></div>';
    document.body.appendChild(overlay);
    overlay.querySelector('.ok').onclick = async () => {
      await fetch('/journal', { method: 'POST', body: JSON.stringify({ bill: b.no, typed: overlay.querySelector('input').value }) });
      overlay.remove();
    };
  };
  window.onhashchange = route; route();`,
);

/** A workbook as a spreadsheet program writes it (shared strings, styles, several parts), built with exceljs. */
async function xlsx(rows: string[][]): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  book.addWorksheet('导出').addRows(rows);
  return Buffer.from(await book.xlsx.writeBuffer());
}

export type Fixtures = PageServer;

export async function startFixtures(): Promise<Fixtures> {
  const workbook = await xlsx([['编号', '状态', '组织'], ...BILLS.map((b) => [b.no, b.status, b.org])]);
  return startPageServer((url, req, res) => {
    const loggedIn = (req.headers.cookie ?? '').includes('sid=ok');
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/table') return html(tablePage(Number(url.searchParams.get('page') ?? '1')));
    if (url.pathname === '/grid') return html(GRID);
    if (url.pathname === '/cards') return html(CARDS);
    if (url.pathname === '/broken') return html(BROKEN);
    if (url.pathname === '/td-headers') return html(TD_HEADERS);
    if (url.pathname === '/app') return html(SPA);
    if (url.pathname === '/api/bills') return loggedIn ? json(200, { items: BILLS }) : json(401, { error: 'login' });
    if (url.pathname.startsWith('/api/bills/')) {
      const bill = BILLS.find((b) => b.no === decodeURIComponent(url.pathname.slice('/api/bills/'.length)));
      if (!loggedIn) return json(401, { error: 'login' });
      return bill
        ? json(200, { data: { bill: { id: bill.no, state: bill.status === '待处理' ? 'open' : 'closed', owner: { org: bill.org } } } })
        : json(404, {});
    }
    if (url.pathname === '/export.csv') {
      const lines = ['编号,状态,备注', ...BILLS.map((b) => `${b.no},${b.status},"含逗号, 和 ""引号"""`)];
      return res.writeHead(200, { 'content-type': 'text/csv' }).end(`\uFEFF${lines.join('\r\n')}\r\n`);
    }
    if (url.pathname === '/export-gbk.csv') {
      // A legacy system's download: GBK, no byte-order mark, nothing in the headers saying so.
      const lines = ['编号,状态,组织', ...BILLS.map((b) => `${b.no},${b.status},${b.org}`)];
      return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(iconv.encode(`${lines.join('\r\n')}\r\n`, 'gbk'));
    }
    if (url.pathname === '/export.xlsx') {
      return res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }).end(workbook);
    }
    return undefined;
  });
}
