import { ACTION_LABELS, formatBeijingTime, formatYuan, KIND_LABELS, STATUS_LABELS } from '../format.js';
import { html, type Html } from '../../../src/http/html.js';
import type { Bill, ProcessingRecord } from '../schemas.js';
import { pageShell, type Viewer } from './layout.js';
import { V2_CSS } from './list.js';

function recordNote(record: ProcessingRecord): string {
  const detail = record.detail ?? {};
  if (record.action === 'refund' && typeof detail.amountCents === 'number') {
    const reason = typeof detail.reason === 'string' && detail.reason ? `，原因：${detail.reason}` : '';
    return `退款 ${formatYuan(detail.amountCents)}${reason}`;
  }
  return '';
}

function notesList(bill: Bill): Html {
  if (bill.notes.length === 0) return html`<p class="hint" style="padding:10px">暂无备注</p>`;
  return html`<table class="grid" aria-label="备注">
    <thead><tr><th scope="col">时间</th><th scope="col">备注</th><th scope="col">添加人</th></tr></thead>
    <tbody>${bill.notes.map((n) => html`<tr><td>${formatBeijingTime(n.at)}</td><td>${n.text}</td><td>${n.identity}</td></tr>`)}</tbody>
  </table>`;
}

export function detailPageV1(bill: Bill, viewer: Viewer, overlay?: Html): Html {
  const records = bill.records.length
    ? bill.records.map(
        (r) =>
          html`<tr><td>${formatBeijingTime(r.at)}</td><td>${ACTION_LABELS[r.action] ?? r.action}</td><td>${r.identity}</td><td>${
            r.via === 'ui' ? '页面' : '接口'
          }</td><td>${recordNote(r)}</td></tr>`,
      )
    : html`<tr><td colspan="5" class="empty">暂无处理记录</td></tr>`;
  return pageShell({
    title: `差异详情 ${bill.billNo}`,
    viewer,
    active: 'list',
    breadcrumb: ['首页', '对账管理', '差异清单', '差异详情'],
    content: html`<h1 class="page-title">差异详情 ${bill.billNo}</h1>
<div class="panel"><div class="panel-heading">基本信息</div><div class="panel-body">
<dl class="kv">
  <dt>单号</dt><dd data-field="bill_no">${bill.billNo}</dd>
  <dt>租户</dt><dd data-field="tenant">${bill.tenant}</dd>
  <dt>差异类型</dt><dd data-field="kind">${KIND_LABELS[bill.kind]}</dd>
  <dt>金额</dt><dd data-field="amount">${formatYuan(bill.amountCents)}</dd>
  <dt>状态</dt><dd data-field="status">${STATUS_LABELS[bill.status]}</dd>
  <dt>更新时间</dt><dd data-field="updated_at">${formatBeijingTime(bill.updatedAt)}</dd>
</dl>
</div></div>
<div class="panel"><div class="panel-heading" id="records-title">处理记录</div><div class="panel-body">
<table class="grid" aria-labelledby="records-title">
  <thead><tr><th scope="col">时间</th><th scope="col">操作</th><th scope="col">操作人</th><th scope="col">渠道</th><th scope="col">说明</th></tr></thead>
  <tbody>${records}</tbody>
</table>
</div></div>
<div class="panel"><div class="panel-heading">备注</div><div class="panel-body">${notesList(bill)}</div></div>
<p><a class="btn" href="/diff/list?tenant=${bill.tenant}">返回差异清单</a></p>
${overlay ?? ''}`,
  });
}

/** The redesigned detail: a key/value table in another order, history as a timeline, no data-field. */
export function detailPageV2(bill: Bill, viewer: Viewer, overlay?: Html): Html {
  const timeline = bill.records.length
    ? html`<ul class="vx-timeline">${[...bill.records]
        .reverse()
        .map(
          (r) => html`<li><b>${ACTION_LABELS[r.action] ?? r.action}</b> · ${r.identity} · ${formatBeijingTime(r.at)} ${recordNote(r)}</li>`,
        )}</ul>`
    : html`<div class="vx-empty">暂无操作记录</div>`;
  return pageShell({
    title: `差异详情 ${bill.billNo}`,
    viewer,
    active: 'list',
    variant: 'v2',
    extraCss: `${V2_CSS}
.vx-kv { border-collapse: collapse; width: 100%; }
.vx-kv th { width: 120px; text-align: left; color: #8c8c8c; font-weight: normal; padding: 8px 0; }
.vx-kv td { padding: 8px 0; color: #262626; }
.vx-timeline { list-style: none; margin: 0; padding: 0 0 0 12px; border-left: 2px solid #e8e8e8; }
.vx-timeline li { padding: 6px 10px; color: #595959; }`,
    content: html`<div class="vx-card">
  <div class="vx-title">差异单 ${bill.billNo}<span class="vx-sub">详情</span></div>
  <table class="vx-kv">
    <tr><th scope="row">处理状态</th><td><i class="vx-tag vx-tag-${bill.status}">${STATUS_LABELS[bill.status]}</i></td></tr>
    <tr><th scope="row">差异金额</th><td class="vx-money">${formatYuan(bill.amountCents)}</td></tr>
    <tr><th scope="row">差异单号</th><td>${bill.billNo}</td></tr>
    <tr><th scope="row">类型</th><td>${KIND_LABELS[bill.kind]}</td></tr>
    <tr><th scope="row">所属租户</th><td>${bill.tenant}</td></tr>
    <tr><th scope="row">最后更新</th><td>${formatBeijingTime(bill.updatedAt)}</td></tr>
  </table>
</div>
<div class="vx-card"><div class="vx-title" style="font-size:15px">操作记录</div>${timeline}</div>
<div class="vx-card"><div class="vx-title" style="font-size:15px">备注</div>${notesList(bill)}</div>
${overlay ?? ''}`,
  });
}
