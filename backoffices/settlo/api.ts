import iconv from 'iconv-lite';
import { z } from 'zod';
import { hangAfterCommit, sendJson } from '../kit/http-util.js';
import { describeIssues, parseJsonText } from '../kit/schemas.js';
import type { Actor } from './book.js';
import { apiError, requireSession, type SettloExchange, type Signed } from './exchange.js';
import { BILL_NO_PATTERN, BillStatusSchema, type Bill, type SettloAction } from './schemas.js';
import type { HeldWrite } from './undo-window.js';
import { beijingTime, KIND_TEXT, plainYuan, STATUS_TEXT } from './words.js';

/**
 * The portal's JSON calls (what the work page's grid and dialogs use), under /portal/api/, authenticated by
 * the session cookie. Errors are `{ error, message }` with the message in Chinese. Every call of a signed-in
 * user counts against the portal's rate limit (429 with Retry-After past it).
 */

export function publicBill(bill: Bill) {
  return {
    billNo: bill.billNo,
    tenant: bill.tenant,
    counterparty: bill.counterparty,
    kind: bill.kind,
    kindText: KIND_TEXT[bill.kind],
    amount: plainYuan(bill.amountCents),
    status: bill.status,
    statusText: STATUS_TEXT[bill.status],
    note: bill.note,
    updatedAt: bill.updatedAt,
  };
}

function parseJson<T extends z.ZodType>(ex: SettloExchange, schema: T): z.infer<T> | undefined {
  const parsed = parseJsonText(ex.body || '{}', schema);
  if (parsed.ok) return parsed.data;
  apiError(ex, 400, 'invalid_request', parsed.message);
  return undefined;
}

const ListQuerySchema = z.object({
  q: z.string().max(100).default(''),
  status: z.union([z.literal(''), BillStatusSchema]).default(''),
});

function listed(ex: SettloExchange, signed: Signed): Bill[] | undefined {
  const parsed = ListQuerySchema.safeParse(Object.fromEntries(ex.url.searchParams));
  if (!parsed.success) {
    apiError(ex, 400, 'invalid_request', describeIssues(parsed.error, 'query'));
    return undefined;
  }
  const { q, status } = parsed.data;
  const needle = q.trim().toLowerCase();
  return ex.office.book
    .forTenant(signed.user.tenant)
    .filter((b) => status === '' || b.status === status)
    .filter((b) => needle === '' || b.billNo.toLowerCase().includes(needle) || b.counterparty.includes(q.trim()));
}

/** The bill when it is the user's tenant's; another tenant's is a 404, as if it did not exist. */
function scoped(ex: SettloExchange, signed: Signed, billNo: string): Bill | undefined {
  const bill = ex.office.book.get(billNo);
  if (!bill || bill.tenant !== signed.user.tenant) {
    apiError(ex, 404, 'not_found', `单号 ${billNo} 不存在`);
    return undefined;
  }
  return bill;
}

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The export a finance clerk opens in an old spreadsheet program: GBK, CRLF, no BOM. */
export function exportCsv(ex: SettloExchange, bills: readonly Bill[]): Buffer {
  const header = ['单号', '所属机构', '对方单位', '类型', '金额', '状态', '处理说明', '更新时间'];
  const rows = bills.map((b) => [
    b.billNo,
    ex.office.tenantName(b.tenant),
    b.counterparty,
    KIND_TEXT[b.kind],
    plainYuan(b.amountCents),
    STATUS_TEXT[b.status],
    b.note ?? '',
    beijingTime(b.updatedAt),
  ]);
  const text = `${[header, ...rows].map((cells) => cells.map(csvCell).join(',')).join('\r\n')}\r\n`;
  return iconv.encode(text, 'gbk');
}

const SettleSchema = z.strictObject({ note: z.string({ error: 'note must be a string' }).max(200) });
const RefundSchema = z.strictObject({ confirmAmount: z.string({ error: 'confirmAmount must be a string' }).max(40) });
const EmptySchema = z.strictObject({});

/**
 * A write reaching the vendor: session and scope were checked by the caller. Order: permission_denied,
 * error_500, state (409), half_success, commit, commit_then_timeout.
 */
async function perform(
  ex: SettloExchange,
  signed: Signed,
  bill: Bill,
  action: SettloAction,
  change: { note?: string; detail?: Record<string, unknown> },
): Promise<void> {
  const { office } = ex;
  const context = { identity: signed.user.username, tenant: bill.tenant, bill: bill.billNo };
  if (office.faults.fire('permission_denied', context)) return apiError(ex, 403, 'permission_denied', '您没有执行此操作的权限');
  if (office.faults.fire('error_500', context)) return apiError(ex, 500, 'internal_error', '系统繁忙，请稍后再试');
  const refusal = office.book.refusal(action, bill.billNo);
  if (refusal) return apiError(ex, refusal.status, refusal.code, refusal.message);
  if (office.faults.fire('half_success', context)) {
    // Answers like success with the bill as it would be, and changes nothing.
    const wouldBe = { settle: 'PROCESSING', reopen: 'PENDING', refund: 'REFUNDED' } as const;
    const shown = { ...bill, status: wouldBe[action], note: action === 'settle' ? (change.note ?? null) : bill.note };
    sendJson(ex.res, 200, { bill: publicBill(shown) });
    return;
  }
  const hang = office.faults.fire('commit_then_timeout', context);
  const actor: Actor = { identity: signed.user.username, sessionId: signed.session.sid };
  office.book.commit({
    action,
    id: bill.billNo,
    actor,
    ...(change.note !== undefined ? { note: change.note } : {}),
    settleDelayMs: action === 'settle' ? office.settleDelayMs(context) : 0,
    ...(change.detail || hang ? { detail: { ...change.detail, ...(hang ? { fault: 'commit_then_timeout' } : {}) } } : {}),
  });
  if (hang) {
    await hangAfterCommit(ex, hang.ms, () => apiError(ex, 504, 'gateway_timeout', '网关超时'));
    return;
  }
  sendJson(ex.res, 200, { bill: publicBill(bill) });
}

/** 处理 / 撤回: held in the undo window (202) unless the window is 0, then sent at once. */
async function holdOrPerform(ex: SettloExchange, billNo: string, action: HeldWrite['action']): Promise<void> {
  const signed = requireSession(ex, 'api', billNo);
  if (!signed) return;
  const bill = scoped(ex, signed, billNo);
  if (!bill) return;
  let note: string | undefined;
  if (action === 'settle') {
    const body = parseJson(ex, SettleSchema);
    if (!body) return;
    note = body.note.trim();
    if (!note) return apiError(ex, 422, 'note_required', '请填写处理说明');
  } else if (!parseJson(ex, EmptySchema)) {
    return;
  }
  const refusal = ex.office.book.refusal(action, billNo);
  if (refusal) return apiError(ex, refusal.status, refusal.code, refusal.message);
  const windowSeconds = ex.office.controls.undoWindowSeconds;
  if (windowSeconds === 0) return perform(ex, signed, bill, action, note === undefined ? {} : { note });
  const held = ex.office.undo.hold({ sid: signed.session.sid, billNo, action, ...(note === undefined ? {} : { note }) }, windowSeconds);
  sendJson(ex.res, 202, { writeId: held.id, billNo, undoSeconds: windowSeconds, sendableAt: new Date(held.sendableAt).toISOString() });
}

function heldWrite(ex: SettloExchange, signed: Signed, id: string): HeldWrite | undefined {
  const held = ex.office.undo.get(id, signed.session.sid);
  if (!held) apiError(ex, 404, 'not_found', '操作不存在或已过期');
  return held;
}

function undo(ex: SettloExchange, id: string): void {
  const signed = requireSession(ex, 'api');
  if (!signed) return;
  const held = heldWrite(ex, signed, id);
  if (!held) return;
  if (held.state === 'sent') {
    apiError(ex, 409, 'already_sent', '操作已生效，无法撤销');
    return;
  }
  held.state = 'undone';
  sendJson(ex.res, 200, { writeId: id, undone: true });
}

async function send(ex: SettloExchange, id: string): Promise<void> {
  const signed = requireSession(ex, 'api');
  if (!signed) return;
  const held = heldWrite(ex, signed, id);
  if (!held) return;
  if (held.state === 'undone') return apiError(ex, 409, 'undone', '操作已撤销');
  if (held.state === 'sent') return apiError(ex, 409, 'already_sent', '操作已生效');
  if (Date.now() < held.sendableAt) return apiError(ex, 409, 'undo_window_open', '撤销期未结束');
  const bill = scoped(ex, signed, held.billNo);
  if (!bill) return;
  held.state = 'sent';
  await perform(ex, signed, bill, held.action, held.note === undefined ? {} : { note: held.note });
}

async function refund(ex: SettloExchange, billNo: string): Promise<void> {
  const signed = requireSession(ex, 'api', billNo);
  if (!signed) return;
  const bill = scoped(ex, signed, billNo);
  if (!bill) return;
  const body = parseJson(ex, RefundSchema);
  if (!body) return;
  const typed = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(body.confirmAmount.trim());
  const cents = typed ? Number(typed[1]) * 100 + Number((typed[2] ?? '').padEnd(2, '0')) : null;
  if (cents !== bill.amountCents) return apiError(ex, 422, 'amount_mismatch', '输入的金额与单据金额不一致');
  await perform(ex, signed, bill, 'refund', { detail: { amountCents: cents } });
}

export async function handleApi(ex: SettloExchange): Promise<void> {
  const method = ex.req.method ?? 'GET';
  const path = ex.url.pathname;
  // The portal's own limit, per signed-in user, before anything is read or written.
  const user = ex.identity;
  if (user) {
    const taken = ex.office.limiter.take(user);
    if (!taken.ok) {
      return apiError(ex, 429, 'rate_limited', `请求过于频繁，请 ${taken.retryAfterSeconds} 秒后再试`, {
        'retry-after': String(taken.retryAfterSeconds),
      });
    }
  }
  if (method === 'GET' && path === '/portal/api/me') {
    const signed = requireSession(ex, 'api');
    if (signed)
      sendJson(ex.res, 200, {
        user: signed.user.username,
        tenant: signed.user.tenant,
        tenantName: ex.office.tenantName(signed.user.tenant),
      });
    return;
  }
  if (method === 'GET' && (path === '/portal/api/bills' || path === '/portal/api/export.csv')) {
    const signed = requireSession(ex, 'api');
    const bills = signed && listed(ex, signed);
    if (!signed || !bills) return;
    if (path === '/portal/api/bills') return sendJson(ex.res, 200, { total: bills.length, rows: bills.map(publicBill) });
    const body = exportCsv(ex, bills);
    ex.res.writeHead(200, {
      'content-type': 'text/csv; charset=GBK',
      'content-disposition': `attachment; filename="settlement-${signed.user.tenant}.csv"`,
      'content-length': String(body.length),
      'cache-control': 'no-store',
    });
    ex.res.end(body);
    return;
  }
  const bill = /^\/portal\/api\/bills\/([^/]+)(\/[a-z]+)?$/.exec(path);
  if (bill?.[1] && BILL_NO_PATTERN.test(bill[1])) {
    const [, billNo, sub] = bill;
    if (method === 'GET' && sub === undefined) {
      const signed = requireSession(ex, 'api', billNo);
      const found = signed && scoped(ex, signed, billNo);
      if (found) sendJson(ex.res, 200, { bill: publicBill(found) });
      return;
    }
    if (method === 'POST' && sub === '/settle') return holdOrPerform(ex, billNo, 'settle');
    if (method === 'POST' && sub === '/reopen') return holdOrPerform(ex, billNo, 'reopen');
    if (method === 'POST' && sub === '/refund') return refund(ex, billNo);
  }
  const write = /^\/portal\/api\/writes\/([A-Za-z0-9_-]{1,40})\/(undo|send)$/.exec(path);
  if (method === 'POST' && write?.[1]) return write[2] === 'undo' ? undo(ex, write[1]) : send(ex, write[1]);
  apiError(ex, 404, 'not_found', `接口不存在：${method} ${path}`);
}
