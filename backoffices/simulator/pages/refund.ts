import { formatBeijingTime, formatYuan, KIND_LABELS, STATUS_LABELS } from '../format.js';
import { html, raw, type Html } from '../../../src/http/html.js';
import type { Bill } from '../schemas.js';
import { REFUND_FORM_SCRIPT } from './client-scripts.js';
import { baseCss, pageShell, type Viewer } from './layout.js';

/** The outer page: bill summary and the form in an iframe, as the vendor's payment module is embedded. */
export function refundPage(bill: Bill, viewer: Viewer): Html {
  return pageShell({
    title: '退款申请',
    viewer,
    active: 'list',
    breadcrumb: ['首页', '对账管理', '差异清单', '退款申请'],
    content: html`<h1 class="page-title">退款申请</h1>
<div class="panel"><div class="panel-heading">差异单信息</div><div class="panel-body">
<dl class="kv">
  <dt>单号</dt><dd>${bill.billNo}</dd>
  <dt>租户</dt><dd>${bill.tenant}</dd>
  <dt>差异类型</dt><dd>${KIND_LABELS[bill.kind]}</dd>
  <dt>差异金额</dt><dd>${formatYuan(bill.amountCents)}</dd>
  <dt>状态</dt><dd>${STATUS_LABELS[bill.status]}</dd>
  <dt>更新时间</dt><dd>${formatBeijingTime(bill.updatedAt)}</dd>
</dl>
</div></div>
<div class="panel"><div class="panel-heading">填写退款信息</div><div class="panel-body">
<div class="notice">退款提交后将原路退回至客户账户，一经提交不可撤销，请仔细核对金额。</div>
<iframe class="refund-frame" title="退款表单" src="/diff/${bill.billNo}/refund/form"></iframe>
</div></div>
<p><a class="btn" href="/diff/list?tenant=${bill.tenant}">返回差异清单</a></p>`,
  });
}

const FRAME_CSS = `
body { background: #fff; min-width: 0; padding: 12px 16px; }
.row { margin-bottom: 12px; }
.row label { display: inline-block; width: 70px; text-align: right; margin-right: 8px; color: #444; }
.row input { width: 220px; height: 24px; border: 1px solid #a9b6c5; padding: 2px 5px; font: inherit; }
.row .help { color: #999; margin-left: 6px; }
.actions { padding-left: 78px; }
.result { padding: 8px 12px; border: 1px solid; margin-bottom: 10px; font-size: 13px; }
.result.ok { background: #dff0d8; border-color: #9ccc8a; color: #2d6a1f; }
.result.err { background: #f8dcdc; border-color: #e2a2a2; color: #a22; }
`;

function frameDocument(title: string, content: Html): Html {
  return html`<html lang="zh-CN">
<head><meta charset="utf-8"><title>${title}</title><style>${baseCss()}${raw(FRAME_CSS)}</style></head>
<body>
${content}
</body>
</html>`;
}

export interface RefundFormOptions {
  csrf: string;
  error?: string;
  amount?: string;
  reason?: string;
}

export function refundFormDocument(bill: Bill, options: RefundFormOptions): Html {
  return frameDocument(
    '退款表单',
    html`${options.error ? html`<div class="result err" role="alert">${options.error}</div>` : ''}
<form method="post" action="/diff/${bill.billNo}/refund" id="refund-form" data-bill-no="${bill.billNo}" autocomplete="off">
  <input type="hidden" name="_csrf" value="${options.csrf}">
  <div class="row"><label for="amount">退款金额</label><input id="amount" name="amount" inputmode="decimal" value="${options.amount ?? ''}"><span class="help">单位：元，须与差异金额一致</span></div>
  <div class="row"><label for="reason">退款原因</label><input id="reason" name="reason" maxlength="200" value="${options.reason ?? ''}"></div>
  <div class="actions"><button type="submit" class="btn btn-danger">提交退款</button></div>
</form>
<script>${raw(REFUND_FORM_SCRIPT)}</script>`,
  );
}

export function refundSubmittedDocument(bill: Bill, amountCents: number, at: string): Html {
  return frameDocument(
    '退款表单',
    html`<div class="result ok" role="status">退款申请已提交</div>
<p>单号：${bill.billNo}<br>退款金额：${formatYuan(amountCents)}<br>受理时间：${formatBeijingTime(at)}</p>
<p style="color:#888">退款将在 1-3 个工作日内原路退回，处理进度请在差异清单中查看。</p>
<p><a class="btn" href="/diff/list?tenant=${bill.tenant}" target="_top">返回差异清单</a></p>`,
  );
}

/** A message inside the iframe, e.g. 403 under permission_denied. */
export function frameMessageDocument(message: string): Html {
  return frameDocument('退款表单', html`<div class="result err" role="alert">${message}</div>`);
}

/** What an nginx in front of the vendor answers when the backend does not. */
export function gatewayTimeoutDocument(): Html {
  return html`<html lang="en"><head><title>504 Gateway Time-out</title></head>
<body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>`;
}

/** The 权限已变更 dialog drawn over a page once the session is revoked. */
export function revokedOverlay(): Html {
  return html`<div class="mask"><div class="dialog" role="dialog" aria-modal="true" aria-labelledby="revoked-title">
  <h2 id="revoked-title">系统提示</h2>
  <div class="dialog-body"><p>权限已变更，请重新登录</p></div>
  <div class="dialog-buttons"><form method="post" action="/logout"><button type="submit" class="btn btn-primary" autofocus>重新登录</button></form></div>
</div></div>`;
}
