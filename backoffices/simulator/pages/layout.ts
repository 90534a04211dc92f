import { html, raw, type Html } from '../../../src/http/html.js';
import { CLIENT_CORE_SCRIPT } from './client-scripts.js';

export const PRODUCT_NAME = '供应商对账后台';

/** What every logged-in page needs from the session. */
export interface Viewer {
  username: string;
  csrf: string;
  /** How long the page's script waits for a write before showing 请求超时. */
  clientTimeoutMs: number;
}

const FONT_STACK = `"Microsoft YaHei", "微软雅黑", "PingFang SC", "Noto Sans SC", SimSun, Arial, sans-serif`;

/** The 2014-era look: gradient header, grey side menu, bordered grids, small type. */
const V1_CSS = `
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font: 12px/1.6 ${FONT_STACK}; color: #333; background: #e9edf2; min-width: 980px; }
a { color: #1d5a9e; text-decoration: none; }
a:hover { text-decoration: underline; color: #c00; }
.topbar { height: 53px; overflow: hidden; display: flex; justify-content: space-between; align-items: center; background: #1f4f8a; background: linear-gradient(#3569a8, #1c4a82); color: #fff; border-bottom: 3px solid #f0a30a; }
.topbar .logo { font-size: 18px; font-weight: bold; padding-left: 16px; letter-spacing: 1px; white-space: nowrap; }
.topbar .logo small { font-size: 11px; font-weight: normal; color: #c8d8ee; margin-left: 6px; letter-spacing: 0; }
.topbar .userbar { padding-right: 16px; color: #dfe9f6; white-space: nowrap; }
.topbar .userbar a { color: #fff; margin-left: 10px; }
.topbar .userbar .sep { color: #7f9cc4; margin: 0 6px; }
.layout { display: flex; min-height: calc(100vh - 53px - 34px); }
.sidebar { width: 170px; flex: none; background: #f4f6f9; border-right: 1px solid #c9d3df; }
.sidebar h3 { margin: 0; padding: 6px 12px; font-size: 12px; color: #fff; background: linear-gradient(#6b88ad, #566f91); border-bottom: 1px solid #4b6283; }
.sidebar ul { list-style: none; margin: 0; padding: 0; }
.sidebar li a, .sidebar li span { display: block; padding: 6px 12px 6px 24px; border-bottom: 1px dotted #d3dae3; color: #335; }
.sidebar li span { color: #99a; cursor: not-allowed; }
.sidebar li.active a { background: #fff6d9; color: #b35900; font-weight: bold; border-left: 3px solid #f0a30a; padding-left: 21px; }
.main { flex: 1; padding: 10px 14px 20px; }
.breadcrumb { background: #f8f8f8; border: 1px solid #d6dbe1; padding: 4px 10px; color: #777; margin-bottom: 10px; }
.notice { border: 1px solid #f0c36d; background: #fff9e3; color: #8a5b00; padding: 5px 10px; margin-bottom: 10px; }
.panel { background: #fff; border: 1px solid #b8c6d6; margin-bottom: 12px; }
.panel-heading { margin: 0; padding: 5px 10px; font-size: 13px; font-weight: bold; color: #234; background: linear-gradient(#fdfdfd, #e3e9f0); border-bottom: 1px solid #b8c6d6; }
.panel-body { padding: 10px; }
h1.page-title { font-size: 16px; margin: 0 0 8px; color: #1c3f6b; border-left: 4px solid #1c4a82; padding-left: 8px; }
.query label { margin-right: 4px; color: #555; }
.query select, .query input { margin-right: 14px; font: inherit; padding: 1px 2px; border: 1px solid #a9b6c5; min-width: 110px; height: 22px; }
.btn { display: inline-block; font: inherit; font-size: 12px; line-height: 18px; padding: 1px 10px; margin: 0 2px; border: 1px solid #9aa6b4; border-radius: 2px; background: linear-gradient(#ffffff, #e2e6eb); color: #222; cursor: pointer; }
.btn:hover { background: linear-gradient(#fff, #d6dde6); text-decoration: none; color: #000; }
.btn[disabled] { color: #999; cursor: default; }
.btn-primary { background: linear-gradient(#4d8fd6, #2a68ad); border-color: #22558e; color: #fff; }
.btn-primary:hover { background: linear-gradient(#5a9ae0, #2f72bb); color: #fff; }
.btn-danger { background: linear-gradient(#e0675c, #b83a2f); border-color: #9a2c22; color: #fff; }
.btn-danger:hover { color: #fff; background: linear-gradient(#e87469, #c2453a); }
.toolbar { margin: 0 0 6px; overflow: hidden; }
.toolbar .summary { float: left; line-height: 24px; color: #666; }
.toolbar .right { float: right; }
table.grid { width: 100%; border-collapse: collapse; background: #fff; }
table.grid th { background: linear-gradient(#f1f5fa, #dde6f0); border: 1px solid #b5c4d6; padding: 5px 6px; text-align: left; font-weight: bold; color: #2b3f57; white-space: nowrap; }
table.grid td { border: 1px solid #d3dce7; padding: 4px 6px; vertical-align: middle; }
table.grid tbody tr:nth-child(even) td { background: #f6f9fc; }
table.grid tbody tr:hover td { background: #fffbe0; }
table.grid td.num { text-align: right; font-family: Tahoma, ${FONT_STACK}; }
table.grid td.empty { text-align: center; color: #999; padding: 18px; }
.st { display: inline-block; padding: 0 5px; border-radius: 2px; font-size: 12px; }
.st-PENDING { color: #b85c00; background: #fff1db; border: 1px solid #f3c27c; }
.st-PROCESSING { color: #1d5a9e; background: #e3efff; border: 1px solid #9cc0ea; }
.st-PROCESSED { color: #2e7d32; background: #e6f4e6; border: 1px solid #a5d3a7; }
.st-REFUNDED { color: #666; background: #eee; border: 1px solid #ccc; }
.pager { margin-top: 8px; text-align: right; color: #555; }
.pager a, .pager .disabled { display: inline-block; border: 1px solid #b5c4d6; padding: 0 8px; margin-left: 4px; background: #fff; }
.pager .disabled { color: #aaa; border-color: #ddd; }
.pager .info { margin: 0 8px; }
.hint { color: #888; padding: 24px; text-align: center; border: 1px dashed #c9d3df; background: #fafbfc; }
dl.kv { display: grid; grid-template-columns: 110px 1fr; margin: 0; border-top: 1px solid #d3dce7; border-left: 1px solid #d3dce7; }
dl.kv dt, dl.kv dd { margin: 0; padding: 5px 8px; border-right: 1px solid #d3dce7; border-bottom: 1px solid #d3dce7; }
dl.kv dt { background: #f1f5fa; color: #445; text-align: right; }
.mask { position: fixed; left: 0; top: 0; right: 0; bottom: 0; background: rgba(20, 30, 45, 0.45); z-index: 100; }
.dialog { width: 380px; margin: 140px auto 0; background: #fff; border: 1px solid #4b6283; box-shadow: 0 3px 14px rgba(0,0,0,.45); }
.dialog h2 { margin: 0; padding: 6px 10px; font-size: 13px; color: #fff; background: linear-gradient(#3569a8, #1c4a82); }
.dialog .dialog-body { padding: 16px 18px; line-height: 2; }
.dialog .dialog-body b { font-family: Tahoma, ${FONT_STACK}; }
.dialog .dialog-buttons { padding: 8px 10px; text-align: right; background: #f3f5f8; border-top: 1px solid #dde3ea; }
#toasts { position: fixed; top: 64px; left: 0; right: 0; text-align: center; z-index: 200; pointer-events: none; }
.toast { display: inline-block; padding: 7px 24px; border: 1px solid; border-radius: 3px; font-size: 13px; box-shadow: 0 2px 6px rgba(0,0,0,.2); }
.toast.ok { background: #dff0d8; border-color: #9ccc8a; color: #2d6a1f; }
.toast.err { background: #f8dcdc; border-color: #e2a2a2; color: #a22; }
.error-box { padding: 30px; text-align: center; }
.error-box .code { font-size: 40px; color: #c9d3df; font-family: Tahoma, Arial, sans-serif; }
.error-box p { font-size: 14px; color: #a33; }
.footer { height: 34px; line-height: 34px; text-align: center; color: #8a96a5; background: #f4f6f9; border-top: 1px solid #c9d3df; font-size: 11px; }
iframe.refund-frame { width: 100%; height: 250px; border: 1px solid #b8c6d6; background: #fff; }
`;

export function baseCss(): Html {
  return raw(V1_CSS);
}

export interface ChromeOptions {
  title: string;
  viewer?: Viewer;
  /** Side-menu entry to highlight. */
  active?: 'list' | 'refund';
  breadcrumb?: string[];
  content: Html;
  /** Page-specific inline script, runs after the shared client core. */
  script?: string;
  /** The redesigned console reuses the shell with its own stylesheet and header. */
  variant?: 'v1' | 'v2';
  extraCss?: string;
}

function userBar(viewer: Viewer): Html {
  return html`<div class="userbar">
    <span data-testid="current-user">当前账号：${viewer.username}</span><span class="sep">|</span><a href="/logout" id="logout-link">退出</a>
    <form id="logout-form" method="post" action="/logout" hidden></form>
  </div>`;
}

function sideMenu(active: ChromeOptions['active']): Html {
  const item = (key: ChromeOptions['active'], label: string, href: string) =>
    active === key
      ? html`<li class="active"><a href="${href}" aria-current="page">${label}</a></li>`
      : html`<li><a href="${href}">${label}</a></li>`;
  return html`<nav class="sidebar" aria-label="功能菜单">
    <h3>对账管理</h3>
    <ul>
      ${item('list', '差异清单', '/diff/list')}
      <li><span title="暂未开通">对账单汇总</span></li>
      <li><span title="暂未开通">争议工单</span></li>
    </ul>
    <h3>资金管理</h3>
    <ul>
      <li><span title="暂未开通">退款记录</span></li>
      <li><span title="暂未开通">结算周期</span></li>
    </ul>
    <h3>系统</h3>
    <ul>
      <li><span title="请联系管理员">修改密码</span></li>
      <li><span title="暂未开通">操作日志</span></li>
    </ul>
  </nav>`;
}

export function pageShell(options: ChromeOptions): Html {
  const { title, viewer, content } = options;
  const csrfMeta = viewer
    ? html`<meta name="csrf-token" content="${viewer.csrf}">
<meta name="request-timeout-ms" content="${viewer.clientTimeoutMs}">`
    : '';
  const crumbs = options.breadcrumb ? html`<div class="breadcrumb">当前位置：${options.breadcrumb.join(' > ')}</div>` : '';
  const script = viewer ? raw(`<script>${CLIENT_CORE_SCRIPT}\n${options.script ?? ''}</script>`) : '';
  return html`<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta http-equiv="X-UA-Compatible" content="IE=edge">
${csrfMeta}
<title>${title} - ${PRODUCT_NAME}</title>
<style>${raw(V1_CSS)}${raw(options.extraCss ?? '')}</style>
</head>
<body class="${options.variant ?? 'v1'}">
<div class="topbar">
  <div class="logo">${PRODUCT_NAME}<small>${options.variant === 'v2' ? 'Vendor Console 4.0' : 'Vendor Settlement Console v3.2.7'}</small></div>
  ${viewer ? userBar(viewer) : ''}
</div>
<div class="layout">
  ${viewer ? sideMenu(options.active) : ''}
  <div class="main">
    ${crumbs}
    ${content}
  </div>
</div>
<div class="footer">© 2013-2026 华信供应链科技有限公司 版权所有 ｜ 客服热线 400-820-0000 ｜ 建议使用 IE9 及以上版本浏览器，分辨率 1280×800</div>
<div id="toasts" aria-live="polite"></div>
${script}
</body>
</html>`;
}

/** A 4xx/5xx page in the logged-in (or anonymous) shell. */
export function errorPage(status: number, message: string, viewer?: Viewer): Html {
  return pageShell({
    title: '提示',
    viewer,
    active: 'list',
    breadcrumb: ['首页', '提示'],
    content: html`<div class="panel"><div class="panel-body error-box">
      <div class="code">${status}</div>
      <p role="alert">${message}</p>
      <a class="btn" href="/diff/list">返回差异清单</a>
    </div></div>`,
  });
}
