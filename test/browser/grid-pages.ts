import type { ServerResponse } from 'node:http';
import { type PageServer, startPageServer } from '../support/page-server.js';

/**
 * Pages shaped like the tables, grids and portals real back offices draw: header rows of <td> cells, a header
 * repeated per <tbody>, a fixed header drawn as its own table, a div-based ARIA table, a virtualising grid (a
 * plain-script virtualiser: only the rows in view are in the DOM, rows carry aria-rowindex, the grid states
 * aria-rowcount), a list short of the total it states, and a portal whose work area is an iframe. Writes (a 处理
 * press, a confirmation) land in `journal`.
 */

export const BILLS = Array.from({ length: 30 }, (_, i) => ({
  no: `N-${String(i + 1).padStart(4, '0')}`,
  status: i % 3 === 0 ? '已处理' : '待处理',
  amount: `${(i + 1) * 10}.00`,
}));

const page = (body: string, script = '', title = '后台') =>
  `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}<script>${script}</script></body></html>`;

const post = `const post = (body) => fetch('/journal', { method: 'POST', body: JSON.stringify(body) });`;

/** <td> headers in <thead>, and the header repeated as <td> cells at the top of a second <tbody> (a printed page). */
const THEAD_TD = page(
  `<table aria-label="对账单"><thead><tr><td>单号</td><td>金额</td><td>状态</td></tr></thead>` +
    `<tbody>${BILLS.slice(0, 3)
      .map((b) => `<tr><td>${b.no}</td><td>${b.amount}</td><td>${b.status}</td></tr>`)
      .join('')}</tbody>` +
    `<tbody><tr><td>单号</td><td>金额</td><td>状态</td></tr>${BILLS.slice(3, 5)
      .map((b) => `<tr><td>${b.no}</td><td>${b.amount}</td><td>${b.status}</td></tr>`)
      .join('')}</tbody></table>`,
);

/** A fixed-header table as admin frameworks draw it: the header row in one <table>, the body rows in another. */
const SPLIT_HEADER = page(
  `<div class="el-table"><div class="hw"><table><thead><tr><th><div class="cell">单号</div></th><th><div class="cell">状态</div></th></tr></thead></table></div>` +
    `<div class="bw"><table><tbody>${BILLS.slice(0, 4)
      .map((b) => `<tr><td><div class="cell">${b.no}</div></td><td><div class="cell">${b.status}</div></td></tr>`)
      .join('')}</tbody></table></div></div>`,
);

/** A div-based ARIA table whose cells state their column (aria-colindex), one row skipping an empty cell. */
const DIV_TABLE = page(
  `<div role="table" aria-label="差异清单"><div role="rowgroup"><div role="row">` +
    `<span role="columnheader" aria-colindex="1">单号</span><span role="columnheader" aria-colindex="2">备注</span>` +
    `<span role="columnheader" aria-colindex="3">状态</span></div></div>` +
    `<div role="rowgroup">${BILLS.slice(0, 3)
      .map((b, i) =>
        i === 1
          ? `<div role="row"><span role="cell" aria-colindex="1">${b.no}</span><span role="cell" aria-colindex="3">${b.status}</span></div>`
          : `<div role="row"><span role="cell" aria-colindex="1">${b.no}</span><span role="cell" aria-colindex="2">备注${i}</span>` +
            `<span role="cell" aria-colindex="3">${b.status}</span></div>`,
      )
      .join('')}</div></div>`,
);

/**
 * A virtualising grid: 30 rows of 30 px in a 240 px viewport, only the rows in view (and two more) in the DOM,
 * drawn anew (new elements) on every scroll, so a row element found before a scroll is gone after it. `?filter=1`
 * adds the grid's filter box; `?debounce=N` redraws only once scrolling has stopped for N ms.
 */
const VIRTUAL = page(
  `<p id="total">共 30 条</p><input aria-label="筛选单号" id="filter" style="display:none">` +
    `<div role="grid" aria-label="差异" aria-rowcount="31" id="grid">` +
    `<div role="row" aria-rowindex="1"><span role="columnheader">单号</span><span role="columnheader">状态</span><span role="columnheader">操作</span></div>` +
    `<div id="vp" style="height:240px;overflow-y:auto;position:relative"><div id="spacer" style="position:relative"></div></div></div>`,
  `${post}
  const bills = ${JSON.stringify(BILLS)};
  const params = new URLSearchParams(location.search);
  const vp = document.getElementById('vp');
  const spacer = document.getElementById('spacer');
  const filter = document.getElementById('filter');
  if (params.get('filter')) filter.style.display = '';
  const H = 30;
  const shown = () => bills.filter((b) => !filter.value || b.no.includes(filter.value));
  const draw = () => {
    const list = shown();
    spacer.style.height = list.length * H + 'px';
    const from = Math.max(0, Math.floor(vp.scrollTop / H) - 1);
    const to = Math.min(list.length, Math.ceil((vp.scrollTop + vp.clientHeight) / H) + 1);
    spacer.innerHTML = list.slice(from, to).map((b, k) => {
      const i = bills.indexOf(b);
      return '<div role="row" aria-rowindex="' + (i + 2) + '" style="position:absolute;top:' + (from + k) * H + 'px;height:' + H + 'px">' +
        '<span role="gridcell">' + b.no + '</span><span role="gridcell">' + b.status + '</span>' +
        '<span role="gridcell"><button type="button" data-bill="' + b.no + '">处理</button></span></div>';
    }).join('');
  };
  // ?debounce=N: the grid redraws N ms after scrolling stops (as grids that reset an is-scrolling state do), and
  // every press is journaled with whether a redraw was still due: a press then may lose its click to the redraw.
  const debounce = Number(params.get('debounce') ?? 0);
  let due;
  spacer.addEventListener('pointerdown', () => {
    if (debounce) post({ press: true, redrawDue: due !== undefined });
  });
  spacer.addEventListener('click', (event) => {
    const bill = event.target.getAttribute && event.target.getAttribute('data-bill');
    if (bill) post({ bill, via: 'grid' });
  });
  vp.addEventListener('scroll', () => {
    if (!debounce) return requestAnimationFrame(draw);
    clearTimeout(due);
    due = setTimeout(() => { due = undefined; draw(); }, debounce);
  });
  filter.addEventListener('input', draw);
  setTimeout(draw, 100);`,
);

/** 20 rows of a 30-row list with no pager the pack names: the page states 共 30 条. */
const SHORT = page(
  `<table aria-label="对账单"><thead><tr><th>单号</th><th>状态</th></tr></thead><tbody>${BILLS.slice(0, 20)
    .map((b) => `<tr><td>${b.no}</td><td>${b.status}</td></tr>`)
    .join('')}</tbody></table><div class="pager">共 30 条 <a href="#">2</a></div>`,
);

/** A legacy portal: a top bar and menu, the work area in an iframe. */
const PORTAL = (src: string) =>
  page(
    `<header>结算门户 <span>你好，svc</span></header><nav><a href="/work/list" target="work">差异清单</a></nav>` +
      `<iframe name="work" title="工作区" src="${src}" style="width:900px;height:600px"></iframe>`,
    '',
    '门户',
  );

/** The list inside the work area: a row's 处理 opens a confirmation dialog in the frame, 确认 writes. */
const WORK_LIST = page(
  `<table aria-label="差异清单"><thead><tr><th>单号</th><th>状态</th><th>操作</th></tr></thead><tbody>${BILLS.slice(0, 5)
    .map(
      (b) =>
        `<tr><td><a href="/work/detail?no=${b.no}">${b.no}</a></td><td>${b.status}</td><td><button type="button">处理</button></td></tr>`,
    )
    .join('')}</tbody></table><p>共 5 条</p>` +
    `<div role="dialog" aria-label="确认处理" hidden><p id="q"></p><button type="button" id="ok">确认</button></div>`,
  `${post}
  let bill;
  document.querySelector('tbody').addEventListener('click', (event) => {
    if (event.target.tagName !== 'BUTTON') return;
    bill = event.target.closest('tr').cells[0].textContent;
    document.getElementById('q').textContent = '确认处理 ' + bill + '？';
    document.querySelector('[role=dialog]').hidden = false;
  });
  document.getElementById('ok').addEventListener('click', () => {
    post({ bill, via: 'frame' });
    document.querySelector('[role=dialog]').hidden = true;
  });`,
);

const WORK_DETAIL = (no: string) =>
  page(`<h1>${no}</h1><dl><dt>处理状态</dt><dd>${BILLS.find((b) => b.no === no)?.status ?? '?'}</dd></dl>`);

const LOGIN = page('<form><label>账号<input></label><label>密码<input type="password"></label><button>登录</button></form>');

export type GridPages = PageServer;

export function startGridPages(): Promise<GridPages> {
  return startPageServer((url, _req, res) => {
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    const routes: Record<string, () => ServerResponse> = {
      '/thead-td': () => html(THEAD_TD),
      '/split-header': () => html(SPLIT_HEADER),
      '/div-table': () => html(DIV_TABLE),
      '/virtual': () => html(VIRTUAL),
      '/short': () => html(SHORT),
      '/portal': () => html(PORTAL(url.searchParams.get('expired') ? '/work/list?expired=1' : '/work/list')),
      '/work/list': () => (url.searchParams.get('expired') ? res.writeHead(302, { location: '/login?from=work' }).end() : html(WORK_LIST)),
      '/work/detail': () => html(WORK_DETAIL(url.searchParams.get('no') ?? '')),
      '/login': () => html(LOGIN),
    };
    return routes[url.pathname]?.();
  });
}
