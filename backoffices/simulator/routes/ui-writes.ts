import { z } from 'zod';
import { canSee } from '../accounts.js';
import type { FaultContext } from '../../kit/faults.js';
import { parseYuan } from '../format.js';
import type { Html } from '../../../src/http/html.js';
import { redirect, sendHtml, sendJson } from '../../kit/http-util.js';
import type { Actor, WriteAction } from '../ledger.js';
import { errorPage } from '../pages/layout.js';
import { frameMessageDocument, gatewayTimeoutDocument, refundFormDocument, refundPage, refundSubmittedDocument } from '../pages/refund.js';
import type { Bill } from '../schemas.js';
import { checkSession, viewerOf, type Authenticated, type Exchange } from './exchange.js';
import { hangAfterCommit } from '../../kit/http-util.js';
import { gatePage } from './ui-pages.js';

/**
 * The write paths of the UI. Order of checks for every write: session
 * (expired / revoked), CSRF, bill and tenant scope, permission_denied,
 * error_500, semantic refusal, validation, half_success, commit,
 * commit_then_timeout. Nothing is committed before the commit step.
 */

interface WriteTarget {
  auth: Authenticated;
  bill: Bill;
  context: FaultContext;
  actor: Actor;
}

function actorOf(auth: Authenticated): Actor {
  return { identity: auth.session.username, sessionId: auth.session.sid, via: 'ui' };
}

/* ---------- 标记处理 / 撤销处理 (fetch, JSON answers) ---------- */

function jsonError(ex: Exchange, status: number, error: string, message: string): undefined {
  sendJson(ex.res, status, { error, message });
  return undefined;
}

function gateFetchWrite(ex: Exchange, billNo: string): WriteTarget | undefined {
  const bill = ex.office.ledger.get(billNo);
  const check = checkSession(ex, { tenant: bill?.tenant, bill: billNo });
  if (check.kind === 'none') return jsonError(ex, 401, 'unauthenticated', '请先登录');
  if (check.kind === 'expired') return jsonError(ex, 401, 'session_expired', '会话已过期，请重新登录');
  if (check.kind === 'revoked') {
    sendJson(ex.res, 401, { error: 'session_revoked' });
    return undefined;
  }
  const { auth } = check;
  if (ex.req.headers['x-csrf-token'] !== auth.session.csrf) {
    return jsonError(ex, 403, 'csrf_invalid', '页面已过期，请刷新后重试');
  }
  if (!bill) return jsonError(ex, 404, 'not_found', '差异单不存在');
  if (!canSee(auth.identity, bill.tenant)) return jsonError(ex, 403, 'forbidden', '无权访问该租户');
  const context = { identity: auth.session.username, tenant: bill.tenant, bill: billNo };
  if (ex.office.faults.fire('permission_denied', context)) {
    return jsonError(ex, 403, 'permission_denied', '无权限执行该操作');
  }
  return { auth, bill, context, actor: actorOf(auth) };
}

export async function postMarkOrUnmark(ex: Exchange, billNo: string, action: Extract<WriteAction, 'mark' | 'unmark'>): Promise<void> {
  const target = gateFetchWrite(ex, billNo);
  if (!target) return;
  const { office } = ex;
  if (office.faults.fire('error_500', target.context)) {
    jsonError(ex, 500, 'internal_error', '系统繁忙，请稍后再试');
    return;
  }
  const refusal = office.ledger.refusal(action, billNo);
  if (refusal) {
    jsonError(ex, 409, 'conflict', refusal);
    return;
  }
  const accepted = { ok: true, billNo, status: 'PROCESSING' };
  if (office.faults.fire('half_success', target.context)) {
    sendJson(ex.res, 200, accepted);
    return;
  }
  const hang = office.faults.fire('commit_then_timeout', target.context);
  const fromStatus = target.bill.status;
  const revert = office.faults.fire('applied_then_reverted', target.context);
  office.ledger.commit(action, billNo, target.actor, office.settleDelayMs(target.context), {
    fromStatus,
    ...(hang ? { fault: 'commit_then_timeout' } : {}),
  });
  if (revert) office.ledger.revertOnceShown(billNo, target.actor, fromStatus);
  if (hang) {
    await hangAfterCommit(ex, hang.ms, () => jsonError(ex, 504, 'gateway_timeout', '网关超时'));
    return;
  }
  sendJson(ex.res, 200, accepted);
}

/* ---------- 退款 (page, iframe form, native confirm, form POST) ---------- */

export function getRefundPage(ex: Exchange, billNo: string, frame: boolean): void {
  const bill = ex.office.ledger.get(billNo);
  const auth = gatePage(ex, { tenant: bill?.tenant, bill: billNo });
  if (!auth) return;
  const viewer = viewerOf(ex, auth.session);
  const fail = (status: number, message: string) =>
    sendHtml(ex.res, status, frame ? frameMessageDocument(message) : errorPage(status, message, viewer), frameHeaders(frame));
  if (!bill) {
    fail(404, '差异单不存在');
    return;
  }
  if (!canSee(auth.identity, bill.tenant)) {
    fail(403, '无权访问该租户');
    return;
  }
  if (frame) {
    sendHtml(ex.res, 200, refundFormDocument(bill, { csrf: auth.session.csrf }), frameHeaders(true));
  } else {
    sendHtml(ex.res, 200, refundPage(bill, viewer));
  }
}

/** The payment module may only be framed by the back office itself. */
function frameHeaders(frame: boolean): Record<string, string> {
  return frame ? { 'x-frame-options': 'SAMEORIGIN' } : {};
}

const RefundFormSchema = z.object({
  amount: z.string().max(40).default(''),
  reason: z.string().max(1000).default(''),
  _csrf: z.string().max(200).default(''),
});

export async function postRefund(ex: Exchange, billNo: string): Promise<void> {
  const form = RefundFormSchema.parse(Object.fromEntries(new URLSearchParams(ex.body)));
  const bill = ex.office.ledger.get(billNo);
  const check = checkSession(ex, { tenant: bill?.tenant, bill: billNo });
  if (check.kind === 'none' || check.kind === 'expired') {
    redirect(ex.res, check.kind === 'none' ? '/login' : '/login?expired=1');
    return;
  }
  if (check.kind === 'revoked') {
    sendJson(ex.res, 401, { error: 'session_revoked' });
    return;
  }
  const { auth } = check;
  const frame = (status: number, page: Html) => sendHtml(ex.res, status, page, frameHeaders(true));
  const fail = (status: number, message: string) => frame(status, frameMessageDocument(message));
  const csrf = form._csrf || ex.req.headers['x-csrf-token'];
  if (csrf !== auth.session.csrf) return fail(403, '页面已过期，请刷新后重试');
  if (!bill) return fail(404, '差异单不存在');
  if (!canSee(auth.identity, bill.tenant)) return fail(403, '无权访问该租户');
  const context = { identity: auth.session.username, tenant: bill.tenant, bill: billNo };
  const { office } = ex;
  if (office.faults.fire('permission_denied', context)) return fail(403, '无权限执行该操作');
  if (office.faults.fire('error_500', context)) return fail(500, '系统繁忙，请稍后再试');
  const refusal = office.ledger.refusal('refund', billNo);
  if (refusal) return fail(409, refusal);
  const again = (error: string) =>
    frame(422, refundFormDocument(bill, { csrf: auth.session.csrf, error, amount: form.amount, reason: form.reason }));
  const amountCents = parseYuan(form.amount);
  if (amountCents === null) return again('退款金额格式不正确，请输入数字，最多两位小数');
  if (amountCents !== bill.amountCents) return again('退款金额与差异金额不符');
  const reason = form.reason.trim();
  if (!reason) return again('请填写退款原因');
  if (reason.length > 200) return again('退款原因不能超过 200 个字');
  const at = new Date().toISOString();
  if (office.faults.fire('half_success', context)) return frame(200, refundSubmittedDocument(bill, amountCents, at));
  const hang = office.faults.fire('commit_then_timeout', context);
  const entry = office.ledger.commit('refund', billNo, actorOf(auth), office.settleDelayMs(context), {
    amountCents,
    reason,
    fromStatus: bill.status,
    ...(hang ? { fault: 'commit_then_timeout' } : {}),
  });
  if (hang) {
    await hangAfterCommit(ex, hang.ms, () => sendHtml(ex.res, 504, gatewayTimeoutDocument()));
    return;
  }
  frame(200, refundSubmittedDocument(bill, amountCents, entry.at));
}
