import { formatBeijingTime, formatYuan, KIND_LABELS, STATUS_LABELS } from '../format.js';
import { html, raw, scriptJson, type Html } from '../../../src/http/html.js';
import type { Bill, BillStatus } from '../schemas.js';
import { LIST_V1_SCRIPT, LIST_V2_SCRIPT } from './client-scripts.js';
import { pageShell, type Viewer } from './layout.js';

export type StatusFilter = 'all' | BillStatus;

export interface ListQuery {
  tenant?: string;
  status: StatusFilter;
  page: number;
  pageSize: number;
  /** Whether page_size was in the URL; pagination links keep it only then. */
  pageSizeGiven: boolean;
}

export interface ListResult {
  rows: Bill[];
  total: number;
  page: number;
  pages: number;
}

export interface ListView {
  viewer: Viewer;
  visibleTenants: readonly string[];
  query: ListQuery;
  result?: ListResult;
  /** Markup drawn over the page, e.g. the 权限已变更 dialog. */
  overlay?: Html;
}

const STATUS_OPTIONS: [StatusFilter, string][] = [
  ['all', '全部'],
  ['PENDING', STATUS_LABELS.PENDING],
  ['PROCESSING', STATUS_LABELS.PROCESSING],
  ['PROCESSED', STATUS_LABELS.PROCESSED],
  ['REFUNDED', STATUS_LABELS.REFUNDED],
];

export function listHref(query: ListQuery, page: number): string {
  const params = new URLSearchParams();
  if (query.tenant) params.set('tenant', query.tenant);
  params.set('status', query.status);
  params.set('page', String(page));
  if (query.pageSizeGiven) params.set('page_size', String(query.pageSize));
  return `/diff/list?${params.toString()}`;
}

function queryForm(view: ListView, submitLabel: string): Html {
  const { query } = view;
  return html`<form method="get" action="/diff/list" class="query" role="search">
    <label for="tenant">租户</label><select id="tenant" name="tenant">${view.visibleTenants.map(
      (t) => html`<option value="${t}"${raw(t === query.tenant ? ' selected' : '')}>${t}</option>`,
    )}</select>
    <label for="status">状态</label><select id="status" name="status">${STATUS_OPTIONS.map(
      ([value, label]) => html`<option value="${value}"${raw(value === query.status ? ' selected' : '')}>${label}</option>`,
    )}</select>
    ${query.pageSizeGiven ? html`<input type="hidden" name="page_size" value="${query.pageSize}">` : ''}
    <button type="submit" class="btn btn-primary">${submitLabel}</button>
  </form>`;
}

function statusTag(status: BillStatus): Html {
  return html`<span class="st st-${status}">${STATUS_LABELS[status]}</span>`;
}

function v1Actions(bill: Bill): Html {
  return html`${bill.status === 'PENDING' ? html`<button type="button" class="btn" data-op="mark">标记处理</button>` : ''}${
    bill.status === 'PROCESSING' || bill.status === 'PROCESSED'
      ? html`<button type="button" class="btn" data-op="unmark">撤销处理</button>`
      : ''
  }${
    bill.kind === 'overcharge' && bill.status !== 'REFUNDED'
      ? html`<button type="button" class="btn btn-danger" data-op="refund">退款</button>`
      : ''
  } <a href="/diff/${bill.billNo}" target="_blank">详情</a>`;
}

function v1Table(result: ListResult, query: ListQuery): Html {
  const rows = result.rows.length
    ? result.rows.map(
        (b) => html`<tr data-bill="${b.billNo}" data-status="${b.status}">
<td data-field="bill_no">${b.billNo}</td><td data-field="tenant">${b.tenant}</td><td data-field="kind">${KIND_LABELS[b.kind]}</td><td data-field="amount" class="num">${formatYuan(b.amountCents)}</td><td data-field="status">${statusTag(b.status)}</td><td data-field="updated_at">${formatBeijingTime(b.updatedAt)}</td><td data-field="actions">${v1Actions(b)}</td>
</tr>`,
      )
    : html`<tr><td colspan="7" class="empty">暂无数据</td></tr>`;
  const prev =
    result.page > 1
      ? html`<a href="${listHref(query, result.page - 1)}">上一页</a>`
      : html`<span class="disabled" aria-disabled="true">上一页</span>`;
  const next =
    result.page < result.pages
      ? html`<a href="${listHref(query, result.page + 1)}">下一页</a>`
      : html`<span class="disabled" aria-disabled="true">下一页</span>`;
  return html`<div class="toolbar">
    <span class="summary">查询结果：租户 ${query.tenant}，每页 ${query.pageSize} 条</span>
    <span class="right"><a class="btn" href="/settlement.csv?tenant=${query.tenant ?? ''}">下载对账文件</a></span>
  </div>
  <table id="diff" class="grid" aria-label="差异清单">
    <thead><tr><th scope="col">单号</th><th scope="col">租户</th><th scope="col">差异类型</th><th scope="col">金额</th><th scope="col">状态</th><th scope="col">更新时间</th><th scope="col">操作</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>
  <nav aria-label="分页" class="pager">${prev}<span class="info">第 ${result.page}/${result.pages} 页，共 ${result.total} 条</span>${next}</nav>`;
}

export function listPageV1(view: ListView): Html {
  const body = view.result ? v1Table(view.result, view.query) : html`<p class="hint">请选择租户后点击查询</p>`;
  return pageShell({
    title: '差异清单',
    viewer: view.viewer,
    active: 'list',
    breadcrumb: ['首页', '对账管理', '差异清单'],
    script: LIST_V1_SCRIPT,
    content: html`<div class="notice">系统公告：2026年11月账期差异单请于 12 月 10 日前处理完毕；逾期未处理的差异将按原金额结算。</div>
<h1 class="page-title">差异清单</h1>
<div class="panel"><div class="panel-heading">查询条件</div><div class="panel-body">${queryForm(view, '查询')}</div></div>
<div class="panel"><div class="panel-heading">差异单列表</div><div class="panel-body">${body}</div></div>
${view.overlay ?? ''}`,
  });
}

/* ---------- v2: the redesigned console (redesign fault) ---------- */

export const V2_CSS = `
body.v2 { background: #f0f2f5; font-size: 13px; }
body.v2 .topbar { background: #001529; border-bottom: 3px solid #001529; }
body.v2 .topbar .logo small { color: #7a8ba3; }
body.v2 .sidebar { background: #fff; border-right: 1px solid #e8e8e8; }
body.v2 .sidebar h3 { background: none; color: #8c8c8c; border: none; font-weight: normal; padding-top: 12px; }
body.v2 .sidebar li a, body.v2 .sidebar li span { border: none; }
body.v2 .sidebar li.active a { background: #e6f7ff; color: #1890ff; border-left: none; border-right: 3px solid #1890ff; }
body.v2 .breadcrumb, body.v2 .notice { display: none; }
.vx-card { background: #fff; border-radius: 4px; padding: 16px 20px; margin-bottom: 16px; box-shadow: 0 1px 2px rgba(0,0,0,.06); }
.vx-title { font-size: 18px; font-weight: 500; color: #262626; margin: 0 0 12px; }
.vx-sub { color: #8c8c8c; font-size: 12px; margin-left: 8px; font-weight: normal; }
body.v2 .query select { height: 30px; border: 1px solid #d9d9d9; border-radius: 4px; }
body.v2 .btn { border-radius: 4px; background: #fff; border-color: #d9d9d9; padding: 4px 14px; }
body.v2 .btn-primary, body.v2 .vx-btn-primary { background: #1890ff; border-color: #1890ff; color: #fff; }
.vx-grid { display: block; border: 1px solid #f0f0f0; }
.vx-head, .vx-row { display: grid; grid-template-columns: 90px 170px 120px 90px 80px 160px 1fr; align-items: center; }
.vx-head { background: #fafafa; color: #595959; font-weight: 500; border-bottom: 1px solid #f0f0f0; }
.vx-head span, .vx-row span { padding: 10px 8px; }
.vx-row { border-bottom: 1px solid #f0f0f0; }
.vx-row:hover { background: #fafafa; }
.vx-money { font-variant-numeric: tabular-nums; color: #cf1322; }
.vx-tag { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; line-height: 20px; font-style: normal; }
.vx-tag-PENDING { background: #fff7e6; color: #d46b08; }
.vx-tag-PROCESSING { background: #e6f7ff; color: #096dd9; }
.vx-tag-PROCESSED { background: #f6ffed; color: #389e0d; }
.vx-tag-REFUNDED { background: #f5f5f5; color: #8c8c8c; }
.vx-link { border: none; background: none; color: #1890ff; cursor: pointer; padding: 0 6px; font: inherit; }
.vx-link.danger { color: #ff4d4f; }
.vx-pages { margin-top: 14px; text-align: right; }
.vx-pages a, .vx-pages b { display: inline-block; min-width: 30px; height: 30px; line-height: 28px; text-align: center; border: 1px solid #d9d9d9; border-radius: 4px; margin-left: 6px; background: #fff; }
.vx-pages b { border-color: #1890ff; color: #1890ff; }
.vx-empty { padding: 30px; text-align: center; color: #bfbfbf; }
body.v2 .dialog { border: none; border-radius: 6px; overflow: hidden; }
body.v2 .dialog h2 { background: #fff; color: #262626; font-size: 16px; padding: 14px 20px; border-bottom: 1px solid #f0f0f0; }
body.v2 .dialog .dialog-buttons { background: #fff; }
`;

function v2Actions(bill: Bill, idx: number): Html {
  return html`${bill.status === 'PENDING' ? html`<button type="button" class="vx-link vx-op" name="mark" value="${idx}">标为已处理</button>` : ''}${
    bill.status === 'PROCESSING' || bill.status === 'PROCESSED'
      ? html`<button type="button" class="vx-link vx-op" name="unmark" value="${idx}">撤回</button>`
      : ''
  }${
    bill.kind === 'overcharge' && bill.status !== 'REFUNDED'
      ? html`<button type="button" class="vx-link vx-op danger" name="refund" value="${idx}">申请退款</button>`
      : ''
  }<a class="vx-link" href="/diff/${bill.billNo}" target="_blank">查看</a>`;
}

function v2Grid(result: ListResult, query: ListQuery): Html {
  const rows = result.rows.length
    ? result.rows.map(
        (b, i) => html`<div class="vx-row" role="row">
<span role="cell"><i class="vx-tag vx-tag-${b.status}">${STATUS_LABELS[b.status]}</i></span><span role="cell">${b.billNo}</span><span role="cell" class="vx-money">${formatYuan(b.amountCents)}</span><span role="cell">${KIND_LABELS[b.kind]}</span><span role="cell">${b.tenant}</span><span role="cell">${formatBeijingTime(b.updatedAt)}</span><span role="cell">${v2Actions(b, i)}</span>
</div>`,
      )
    : html`<div class="vx-empty">没有符合条件的差异单</div>`;
  const pageLinks: Html[] = [];
  if (result.page > 1) pageLinks.push(html`<a href="${listHref(query, result.page - 1)}" title="上一页">‹</a>`);
  for (let p = 1; p <= result.pages; p++) {
    pageLinks.push(p === result.page ? html`<b aria-current="page">${p}</b>` : html`<a href="${listHref(query, p)}">${p}</a>`);
  }
  if (result.page < result.pages) pageLinks.push(html`<a href="${listHref(query, result.page + 1)}" title="下一页">›</a>`);
  const rowData = result.rows.map((b) => ({ no: b.billNo, amount: formatYuan(b.amountCents) }));
  return html`<div class="vx-grid" role="table" aria-label="差异单列表">
  <div role="rowgroup"><div class="vx-head" role="row"><span role="columnheader">状态</span><span role="columnheader">单号</span><span role="columnheader">金额</span><span role="columnheader">类型</span><span role="columnheader">租户</span><span role="columnheader">最后更新</span><span role="columnheader">操作</span></div></div>
  <div role="rowgroup">${rows}</div>
</div>
<div class="vx-pages"><span class="vx-sub">共 ${result.total} 条</span>${pageLinks}</div>
<script type="application/json" id="vx-rows">${scriptJson(rowData)}</script>`;
}

export function listPageV2(view: ListView): Html {
  const body = view.result ? v2Grid(view.result, view.query) : html`<div class="vx-empty">请选择租户后点击查询</div>`;
  return pageShell({
    title: '差异清单',
    viewer: view.viewer,
    active: 'list',
    variant: 'v2',
    extraCss: V2_CSS,
    script: LIST_V2_SCRIPT,
    content: html`<div class="vx-card">
  <div class="vx-title">差异单管理<span class="vx-sub">新版控制台</span></div>
  ${queryForm(view, '查询')}
</div>
<div class="vx-card">
  <div class="vx-title" style="font-size:15px">查询结果${
    view.result ? html`<a class="btn" style="float:right" href="/settlement.csv?tenant=${view.query.tenant ?? ''}">导出对账单</a>` : ''
  }</div>
  ${body}
</div>
${view.overlay ?? ''}`,
  });
}
