import { html, raw, scriptJson, type Html } from '../../src/http/html.js';
import type { SettloUser } from './accounts.js';
import type { Bill } from './schemas.js';
import { beijingTime, KIND_TEXT, STATUS_TEXT, yuanText } from './words.js';

/**
 * Settlo's server-rendered pages: the login and code pages, the portal frame (top bar, menu, the work area
 * in an iframe) and the work pages shown inside it. The bill list itself is drawn in the browser by the
 * grid library from the portal's JSON calls (web/work.js).
 */

export const PRODUCT_NAME = 'Settlo 结算平台';
export const SHOELACE_BASE = '/static/shoelace';
export const GRID_SCRIPT = '/static/ag-grid/ag-grid-community.min.js';

const FONT = `"Noto Sans SC", "Microsoft YaHei", "SimSun", sans-serif`;

const CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.5 ${FONT}; color: #222; background: #eef2f7; }
.topbar { height: 44px; background: linear-gradient(#2d5d9f, #1f4a85); color: #fff; display: flex; align-items: center; padding: 0 14px; gap: 24px; }
.topbar .logo { font-size: 17px; font-weight: bold; letter-spacing: 1px; }
.topbar .who { margin-left: auto; }
.topbar a { color: #ffd; }
.shell { display: flex; height: calc(100vh - 44px); }
.menu { width: 180px; background: #dfe7f1; border-right: 1px solid #9fb3cc; padding: 8px 0; }
.menu h2 { font-size: 13px; margin: 6px 12px; color: #345; }
.menu a { display: block; padding: 6px 18px; color: #1b3d6d; text-decoration: none; }
.menu a:hover { background: #c7d6ea; }
.work { flex: 1; border: 0; width: 100%; height: 100%; background: #fff; }
.box { width: 400px; margin: 100px auto 0; background: #fff; border: 1px solid #8fa6c2; padding: 16px 24px 20px; }
.box h1 { font-size: 18px; margin: 0 0 14px; color: #1f4a85; }
.box label { display: inline-block; width: 80px; }
.box .row { margin: 10px 0; }
.box input { width: 240px; padding: 4px; }
.msg { margin: 0 0 10px; padding: 5px 8px; border: 1px solid #e2a2a2; background: #f8dcdc; color: #a22; }
.page { padding: 12px 16px; }
.page h1 { font-size: 16px; margin: 0 0 10px; color: #1f4a85; }
.toolbar { display: flex; gap: 10px; align-items: flex-end; margin-bottom: 8px; }
.count { margin: 6px 0; color: #444; }
dl { display: grid; grid-template-columns: 110px 1fr; gap: 6px 10px; background: #fff; padding: 10px; border: 1px solid #c8d3e0; }
dt { color: #555; }
dd { margin: 0; }
#toast { position: fixed; right: 16px; bottom: 16px; display: flex; flex-direction: column; gap: 6px; }
#toast > div { background: #333; color: #fff; padding: 8px 12px; border-radius: 3px; min-width: 260px; }
#toast > div.error { background: #a22; }
#toast button { margin-left: 10px; }
`;

function page(title: string, body: Html, head: Html = html``): Html {
  return html`<html lang="zh-CN"><head><meta charset="utf-8"><title>${title} - ${PRODUCT_NAME}</title>
<link rel="icon" href="data:,"><style>${raw(CSS)}</style>${head}</head>${body}</html>`;
}

export function loginPage(options: { message?: string; username?: string }): Html {
  return page(
    '登录',
    html`<body><div class="box"><h1>${PRODUCT_NAME}</h1>
<form method="post" action="/login" autocomplete="off">
${options.message ? html`<div class="msg" role="alert">${options.message}</div>` : ''}
<div class="row"><label for="username">用户名</label><input id="username" name="username" value="${options.username ?? ''}"></div>
<div class="row"><label for="password">密码</label><input id="password" name="password" type="password"></div>
<div class="row"><button type="submit">登录</button></div>
</form></div></body>`,
  );
}

export function codePage(options: { failed: boolean }): Html {
  return page(
    '动态口令',
    html`<body><div class="box"><h1>二次验证</h1>
<form method="post" action="/login/totp" autocomplete="off">
${options.failed ? html`<div class="msg" role="alert">动态口令错误，请重新输入</div>` : ''}
<p>请输入身份验证器中显示的 6 位动态口令。</p>
<div class="row"><label for="code">动态口令</label><input id="code" name="code" inputmode="numeric" maxlength="6"></div>
<div class="row"><button type="submit">验证</button></div>
</form></div></body>`,
  );
}

/** The portal: top bar, menu, and the work area in a frame that the menu's links target. */
export function portalPage(user: SettloUser, tenantName: string): Html {
  return page(
    '工作台',
    html`<body>
<header class="topbar"><span class="logo">${PRODUCT_NAME}</span><span>当前机构：${tenantName}</span>
<span class="who">用户：${user.username}</span><a href="/logout">退出</a></header>
<div class="shell">
<nav class="menu" aria-label="功能菜单"><h2>差异处理</h2>
<a href="/portal/work/bills?status=PENDING" target="work">待处理差异</a>
<a href="/portal/work/bills" target="work">全部单据</a>
<h2>报表</h2><a href="/portal/api/export.csv">导出对账文件</a></nav>
<iframe class="work" name="work" title="工作区" src="/portal/work/bills"></iframe>
</div></body>`,
  );
}

export interface WorkBoot {
  layout: 1 | 2;
  view: 'scroll' | 'paged';
  q: string;
  status: string;
  pageSize: number;
  undoWindowSeconds: number;
  clientTimeoutMs: number;
  shoelaceBase: string;
}

/** The bill list (inside the frame): a search box, the view switch, the grid, the dialogs and the toasts. */
export function billsPage(boot: WorkBoot): Html {
  const heading = boot.layout === 2 ? '差异单据管理' : '结算差异单';
  return page(
    heading,
    html`<body><main class="page">
<h1>${heading}</h1>
<form class="toolbar" id="search" method="get" action="/portal/work/bills">
  <sl-input name="q" label="单号" size="small" value="${boot.q}" placeholder="输入单号或对方单位"></sl-input>
  <label>显示方式 <select name="view" id="view"><option value="scroll"${raw(boot.view === 'scroll' ? ' selected' : '')}>滚动加载</option>
  <option value="paged"${raw(boot.view === 'paged' ? ' selected' : '')}>分页显示</option></select></label>
  <sl-button type="submit" size="small" variant="primary">查询</sl-button>
  <a href="/portal/api/export.csv?q=${encodeURIComponent(boot.q)}" download>导出 CSV</a>
</form>
<div id="grid" style="height: ${boot.view === 'paged' ? 'auto' : '360px'}; width: 100%;"></div>
<p class="count" id="count">加载中…</p>
</main>
<sl-dialog id="settle-dialog" label="处理差异单">
  <p id="settle-summary"></p>
  <sl-textarea id="settle-note" label="处理说明" rows="3" maxlength="200"></sl-textarea>
  <p class="msg" id="settle-error" role="alert" hidden></p>
  <sl-button slot="footer" id="settle-cancel">取消</sl-button>
  <sl-button slot="footer" variant="primary" id="settle-confirm">确认处理</sl-button>
</sl-dialog>
<sl-dialog id="refund-dialog" label="退款确认">
  <p id="refund-summary"></p>
  <sl-input id="refund-amount" label="退款金额" autocomplete="off"></sl-input>
  <p class="msg" id="refund-error" role="alert" hidden></p>
  <sl-button slot="footer" id="refund-cancel">取消</sl-button>
  <sl-button slot="footer" variant="danger" id="refund-confirm">确认退款</sl-button>
</sl-dialog>
<div id="toast"></div>
<script>window.__SETTLO__=${scriptJson(boot)};</script>
<script src="${GRID_SCRIPT}"></script>
<script type="module" src="/static/work.js"></script>
</body>`,
    html`<link rel="stylesheet" href="${SHOELACE_BASE}/themes/light.css">`,
  );
}

/** One bill, label by label (inside the frame). */
export function billPage(bill: Bill, tenantName: string): Html {
  return page(
    bill.billNo,
    html`<body><main class="page"><h1>结算单 ${bill.billNo}</h1>
<p><a href="/portal/work/bills">返回列表</a></p>
<dl>
<dt>单号</dt><dd>${bill.billNo}</dd>
<dt>所属机构</dt><dd>${tenantName}</dd>
<dt>对方单位</dt><dd>${bill.counterparty}</dd>
<dt>类型</dt><dd>${KIND_TEXT[bill.kind]}</dd>
<dt>金额</dt><dd>${yuanText(bill.amountCents)}</dd>
<dt>状态</dt><dd>${STATUS_TEXT[bill.status]}</dd>
<dt>处理说明</dt><dd>${bill.note ?? '—'}</dd>
<dt>更新时间</dt><dd>${beijingTime(bill.updatedAt)}</dd>
</dl></main></body>`,
  );
}

export function messagePage(status: string, text: string, link?: { href: string; text: string }): Html {
  return page(
    status,
    html`<body><div class="box"><h1>${status}</h1><p>${text}</p>${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}</div></body>`,
  );
}
