import type { ApprovalRequest } from '../app/ports/approvals.js';

/**
 * The approval pages: server-rendered, no script, Chinese first with English
 * subtitles. Every value is escaped; the only image is the before-screenshot,
 * served by this server.
 */

import { html, joinHtml, raw, type Html } from '../http/html.js';
import { oneLine } from '../lib/one-line.js';
import { parseAmount, showAmount } from '../domain/amount.js';

/** A stored value as one bounded line of data (see oneLine); the html template escapes it. */
const show = (value: unknown, max = 120): string => oneLine(value, max);

const STYLE = `
*{box-sizing:border-box}
body{margin:0;background:#f3f4f6;color:#1f2937;font:16px/1.6 "Noto Sans SC","PingFang SC","Microsoft YaHei",system-ui,sans-serif}
main{max-width:880px;margin:0 auto;padding:24px 20px 40px}
.brand{margin:0;color:#6b7280;font-size:14px;letter-spacing:.04em}
h1{margin:4px 0 16px;font-size:26px;line-height:1.3}
.en{display:block;color:#6b7280;font-size:.8em;font-weight:400;line-height:1.4}
.inline-en{color:#6b7280;font-size:.85em;margin-left:.4em}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:18px 20px;margin:0 0 16px}
.warn{background:#fff7ed;border:1px solid #fdba74;border-radius:10px;padding:12px 16px;margin:0 0 16px}
.ok{background:#ecfdf5;border-color:#6ee7b7}
.bad{background:#fef2f2;border-color:#fca5a5}
dl.facts{display:grid;grid-template-columns:minmax(150px,max-content) 1fr;gap:10px 20px;margin:0}
dl.facts>div{display:contents}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;word-break:break-all}
.amount{font-size:22px;font-weight:700;color:#b91c1c}
.figures{margin:0;padding:0;list-style:none}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:#f3f4f6;padding:1px 5px;border-radius:4px}
figure{margin:0}
figure img{display:block;max-width:100%;border:1px solid #d1d5db;border-radius:6px;background:#fafafa}
figcaption{margin-top:6px;font-size:14px;color:#4b5563}
label{display:block;font-weight:600;margin-bottom:6px}
textarea{width:100%;min-height:64px;font:inherit;padding:8px;border:1px solid #d1d5db;border-radius:6px}
.actions{display:flex;gap:14px;margin-top:14px;flex-wrap:wrap}
button{font:inherit;font-size:18px;font-weight:700;padding:10px 28px;border-radius:8px;border:0;cursor:pointer;color:#fff;line-height:1.3}
button .en{color:#e5e7eb}
button.approve{background:#15803d}
button.reject{background:#b91c1c}
.fine{font-size:14px;color:#4b5563}
`;

function layout(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} - Paperclip</title>
<style>${raw(STYLE)}</style>
</head>
<body><main>
<p class="brand">Paperclip · 写操作审批 Write approvals</p>
${body}
</main></body>
</html>`.value;
}

/** ¥1,234.50 from the amount string the batch read from the vendor list ("1234.50"); text that is no amount as it is. */
export function formatAmount(amount: string | undefined): string {
  const parsed = amount === undefined ? undefined : parseAmount(amount);
  return parsed ? showAmount(parsed) : (amount ?? '—');
}

/** Beijing time, the vendor's clock, plus the exact UTC instant. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const local = new Intl.DateTimeFormat('zh-CN', {
    timeZone: 'Asia/Shanghai',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  }).format(date);
  return `${local}（北京时间 Beijing time）`;
}

const STATUS_LABELS: Record<ApprovalRequest['status'], string> = {
  PENDING: '待审批 Pending',
  APPROVED: '已批准 Approved',
  REJECTED: '已拒绝 Rejected',
  EXPIRED: '已过期 Expired',
};

export interface ApprovalView {
  request: ApprovalRequest;
  approver: string;
  tenantName?: string;
  actionDescription?: string;
  reversibility?: string;
  /** Link to the before-screenshot on this server (same signed parameters as the page). */
  screenshotUrl?: string;
}

function facts(view: ApprovalView): Html {
  const { request } = view;
  const row = (zh: string, en: string, value: Html | string) =>
    html`<div><dt>${zh}<span class="en">${en}</span></dt><dd>${value}</dd></div>`;
  const tenant = view.tenantName
    ? html`${show(view.tenantName)} <code>${show(request.tenant)}</code>`
    : html`<code>${show(request.tenant)}</code>`;
  const action = html`<code>${show(request.action)}</code>${view.actionDescription ? ` ${show(view.actionDescription)}` : ''}`;
  return html`<dl class="facts">
${row('租户', 'Tenant', tenant)}
${row('单号', 'Bill', html`<code>${show(request.billNo)}</code>`)}
${row('动作', 'Action', action)}
${row('金额', request.vendorFigures ? "Amount (the task's parameter)" : 'Amount', html`<span class="amount">${show(formatAmount(request.amount), 40)}</span>`)}
${vendorFigures(request, row)}
${row('申请人', 'Requested by', show(request.requester))}
${row('任务', 'Task', html`<code>${show(request.taskId)}</code>`)}
${row('幂等键', 'Idempotency key', html`<code>${show(request.key)}</code>`)}
${row('申请时间', 'Requested at', formatTime(request.createdAt))}
${row('有效期至', 'Expires', formatTime(request.expiresAtIso))}
${row('审批人', 'You are', show(view.approver))}
${row('状态', 'Status', STATUS_LABELS[request.status])}
</dl>`;
}

/**
 * The vendor's own figures, read from the vendor with the pre-state (never from the task), each as the vendor shows
 * it, in a row of their own so the approver can set them beside what the task asks for.
 */
function vendorFigures(request: ApprovalRequest, row: (zh: string, en: string, value: Html | string) => Html): Html | string {
  const figures = Object.entries(request.vendorFigures ?? {});
  if (figures.length === 0) return '';
  const items = figures.map(
    ([name, value]) => html`<li><code>${show(name, 40)}</code> <span class="amount">${show(value, 40)}</span></li>`,
  );
  return row(
    '供应商数据',
    "The vendor's figures, read from the vendor before this request",
    html`<ul class="figures">${joinHtml(items, html``)}</ul>`,
  );
}

function screenshot(view: ApprovalView): Html {
  if (!view.screenshotUrl) {
    return html`<p class="fine">没有操作前截图。<span class="en">No before-screenshot was stored for this request.</span></p>`;
  }
  return html`<figure>
<img src="${view.screenshotUrl}" alt="操作前截图 Before screenshot of ${show(view.request.billNo)}" width="1280">
<figcaption>操作前截图：快照时刻的供应商后台。<span class="en">Before screenshot: the vendor back office when the pre-state was read.</span></figcaption>
</figure>`;
}

/** What the decision section holds: the form, or (when policy requires sign-in and nobody suitable is signed in) the way to sign in. */
export type DecisionPanel =
  | { kind: 'form'; action: string; hidden: Record<string, string>; signedInAs?: string }
  | { kind: 'sign_in'; signInUrl: string; signedInAs?: string };

function decisionSection(view: ApprovalView, panel: DecisionPanel): Html {
  if (panel.kind === 'sign_in') {
    const other = panel.signedInAs
      ? html`<p class="warn bad" role="alert">您当前登录的是 ${show(panel.signedInAs)}，而此申请发给 ${show(view.approver)}。<span class="en">You are signed in as ${show(panel.signedInAs)}, but this request is addressed to ${show(view.approver)}: only that approver can decide it.</span></p>`
      : '';
    return html`<section class="card" aria-label="决定 Decision">
<p class="warn" role="note"><strong>此申请需要审批人登录后才能决定。</strong>仅凭链接只能查看。<span class="en">This request needs the approver to sign in before deciding. The link alone only shows it.</span></p>
${other}
<p><a href="${panel.signInUrl}">以 ${show(view.approver)} 登录 <span class="en">Sign in as ${show(view.approver)}</span></a></p>
</section>`;
  }
  const hidden = Object.entries(panel.hidden).map(
    ([name, value], i) => html`${i ? '\n' : ''}<input type="hidden" name="${name}" value="${value}">`,
  );
  return html`<section class="card" aria-label="决定 Decision">
${panel.signedInAs ? html`<p class="fine" role="status">已登录：${show(panel.signedInAs)}<span class="en">Signed in as ${show(panel.signedInAs)}</span></p>` : ''}
<form method="post" action="${panel.action}">
${hidden}
<label for="note">备注（可选）<span class="en">Note (optional, kept in the audit trail)</span></label>
<textarea id="note" name="note" maxlength="500"></textarea>
<div class="actions">
<button type="submit" name="decision" value="approve" class="approve">批准 <span class="en">Approve</span></button>
<button type="submit" name="decision" value="reject" class="reject">拒绝 <span class="en">Reject</span></button>
</div>
</form>
</section>`;
}

/** GET of a pending request: what will happen, and the decision form (or the way to sign in first). */
export function approvalPage(view: ApprovalView, panel: DecisionPanel): string {
  const irreversible = view.reversibility === 'irreversible';
  return layout(
    `审批 ${oneLine(view.request.billNo, 64)}`,
    html`<h1>待审批操作<span class="en">Approval request</span></h1>
${irreversible ? html`<p class="warn" role="note"><strong>此操作不可撤销。</strong>请核对下列信息与截图后再决定。<span class="en">This action is irreversible. Check the details and the screenshot before you decide.</span></p>` : ''}
<section class="card" aria-label="申请详情 Request details">${facts(view)}</section>
<section class="card" aria-label="操作前截图 Before screenshot">${screenshot(view)}</section>
${decisionSection(view, panel)}
<p class="fine">打开本页不会做出任何决定；只有点击按钮才会记录您的决定，且每个申请只能决定一次。<span class="en">Opening this page decides nothing. Only the buttons record a decision, and each request can be decided once.</span></p>`,
  );
}

/** After a decision was recorded. */
export function decidedPage(view: ApprovalView, result: { decision: 'approve' | 'reject'; delivered: boolean }): string {
  const approved = result.decision === 'approve';
  const heading = approved ? html`已批准<span class="en">Approved</span>` : html`已拒绝<span class="en">Rejected</span>`;
  const next = !result.delivered
    ? html`<p class="warn bad" role="alert">决定已记录，但该流程已不再等待（已超时或已停止），因此不会执行任何操作。<span class="en">Your decision was recorded, but the workflow no longer waits for it (it expired or was stopped): nothing will be executed.</span></p>`
    : approved
      ? html`<p class="warn ok" role="status">Paperclip 现在执行该操作；是否成功以独立回读为准，结果记录在审计链中。<span class="en">Paperclip now executes the action; success is decided by an independent readback and recorded in the audit trail.</span></p>`
      : html`<p class="warn ok" role="status">该操作不会执行。<span class="en">The action will not be executed.</span></p>`;
  return layout(
    `${approved ? '已批准' : '已拒绝'} ${oneLine(view.request.billNo, 64)}`,
    html`<h1>${heading}</h1>\n${next}\n<section class="card">${facts(view)}</section>`,
  );
}

/** Every refusal: what happened, and that nothing changed. */
export function refusalPage(status: number, zh: string, en: string, detail?: string, view?: ApprovalView): string {
  return layout(
    zh,
    html`<h1>${zh}<span class="en">${en}</span></h1>
<p class="warn bad" role="alert">未做任何更改。<span class="en">Nothing was changed. (HTTP ${status})</span></p>
${detail ? html`<p>${show(detail, 600)}</p>` : ''}
${view ? html`<section class="card">${facts(view)}</section>` : ''}`,
  );
}
