import { z } from 'zod';
import { canSee } from '../accounts.js';
import type { Html } from '../../../src/http/html.js';
import { redirect, safeNext, sendHtml } from '../../kit/http-util.js';
import { detailPageV1, detailPageV2 } from '../pages/detail.js';
import { errorPage } from '../pages/layout.js';
import { listPageV1, listPageV2, type ListQuery, type ListResult, type ListView } from '../pages/list.js';
import { loginPage } from '../pages/login.js';
import { startSecondFactor } from './second-factor.js';
import { revokedOverlay } from '../pages/refund.js';
import { BILL_STATUSES } from '../schemas.js';
import { checkSession, sidOf, SESSION_COOKIE, viewerOf, type Authenticated, type Exchange } from './exchange.js';

/* ---------- login / logout ---------- */

export function getLogin(ex: Exchange): void {
  const next = safeNext(ex.url.searchParams.get('next'));
  sendHtml(ex.res, 200, loginPage({ next, expired: ex.url.searchParams.get('expired') === '1' }));
}

const LoginFormSchema = z.object({
  username: z.string().max(64).default(''),
  password: z.string().max(128).default(''),
  next: z.string().max(2000).optional(),
});

export async function postLogin(ex: Exchange): Promise<void> {
  const form = LoginFormSchema.safeParse(Object.fromEntries(new URLSearchParams(ex.body)));
  const fields = form.success ? form.data : { username: '', password: '', next: undefined };
  const next = safeNext(fields.next);
  const account = ex.office.accountByUsername(fields.username.trim());
  if (!account || account.password !== fields.password) {
    sendHtml(ex.res, 401, loginPage({ next, username: fields.username, failed: true }));
    return;
  }
  ex.identity = account.username;
  if (ex.office.secondFactorPeriod(account) !== undefined) return startSecondFactor(ex, account, next);
  ex.office.sessions.destroy(sidOf(ex));
  const session = ex.office.sessions.create(account.username);
  ex.sessionId = session.sid;
  // A browser-session cookie: the server enforces the TTL, so an expired sid still arrives and can be told apart.
  redirect(ex.res, next ?? '/diff/list', {
    'set-cookie': `${SESSION_COOKIE}=${session.sid}; Path=/; HttpOnly; SameSite=Lax`,
  });
}

export function logout(ex: Exchange): void {
  ex.office.sessions.destroy(sidOf(ex));
  redirect(ex.res, '/login', { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` });
}

/* ---------- session gate for pages ---------- */

/**
 * Pages: no session -> login with next; expired -> /login?expired=1;
 * revoked -> the list page under the 权限已变更 dialog. Returns the
 * authenticated viewer, or undefined when the answer was already sent.
 */
export function gatePage(ex: Exchange, context: { tenant?: string; bill?: string }): Authenticated | undefined {
  const check = checkSession(ex, context);
  switch (check.kind) {
    case 'none':
      redirect(ex.res, `/login?next=${encodeURIComponent(ex.url.pathname + ex.url.search)}`);
      return undefined;
    case 'expired':
      redirect(ex.res, '/login?expired=1');
      return undefined;
    case 'revoked':
      sendRevokedPage(ex, check.auth);
      return undefined;
    case 'ok':
      return check.auth;
  }
}

/** Whatever page was asked for, a revoked session sees the list under the dialog (as in the incident). */
function sendRevokedPage(ex: Exchange, auth: Authenticated): void {
  const parsed = ex.url.pathname === '/diff/list' ? parseListQuery(ex) : undefined;
  const query: ListQuery =
    parsed?.ok && parsed.query.tenant && canSee(auth.identity, parsed.query.tenant)
      ? parsed.query
      : { status: 'all', page: 1, pageSize: ex.office.pageSize, pageSizeGiven: false };
  sendHtml(ex.res, 200, listPageV1(buildListView(ex, auth, query, revokedOverlay())));
}

/* ---------- list ---------- */

const STATUS_FILTERS = ['all', ...BILL_STATUSES] as const;

const ListParamsSchema = z.object({
  tenant: z.string().max(40).optional(),
  status: z.enum(STATUS_FILTERS, { error: 'status 只能是 all、PENDING、PROCESSING、PROCESSED 或 REFUNDED' }).default('all'),
  page: z.coerce.number({ error: 'page 必须是正整数' }).int('page 必须是正整数').min(1, 'page 必须是正整数').default(1),
  page_size: z.coerce
    .number({ error: 'page_size 必须是 1 到 100 之间的整数' })
    .int('page_size 必须是 1 到 100 之间的整数')
    .min(1, 'page_size 必须是 1 到 100 之间的整数')
    .max(100, 'page_size 必须是 1 到 100 之间的整数')
    .optional(),
});

type ParsedListQuery = { ok: true; query: ListQuery } | { ok: false; message: string };

function parseListQuery(ex: Exchange): ParsedListQuery {
  const params: Record<string, string> = {};
  for (const key of ['tenant', 'status', 'page', 'page_size']) {
    const value = ex.url.searchParams.get(key);
    if (value !== null && value !== '') params[key] = value;
  }
  const parsed = ListParamsSchema.safeParse(params);
  if (!parsed.success) return { ok: false, message: parsed.error.issues.map((i) => i.message).join('；') };
  const { tenant, status, page, page_size: pageSize } = parsed.data;
  return {
    ok: true,
    query: { tenant, status, page, pageSize: pageSize ?? ex.office.pageSize, pageSizeGiven: pageSize !== undefined },
  };
}

function queryResult(ex: Exchange, query: ListQuery): ListResult | undefined {
  if (!query.tenant) return undefined;
  const all = ex.office.ledger.forTenant(query.tenant);
  const matching = query.status === 'all' ? all : all.filter((b) => b.status === query.status);
  const pages = Math.max(1, Math.ceil(matching.length / query.pageSize));
  const page = Math.min(query.page, pages);
  const start = (page - 1) * query.pageSize;
  return { rows: matching.slice(start, start + query.pageSize), total: matching.length, page, pages };
}

function buildListView(ex: Exchange, auth: Authenticated, query: ListQuery, overlay?: Html): ListView {
  // Without a tenant in the URL nothing is selected and the browser shows the first
  // visible tenant, so 查询 works straight away.
  return {
    viewer: viewerOf(ex, auth.session),
    visibleTenants: auth.identity.tenants,
    query,
    result: queryResult(ex, query),
    overlay,
  };
}

export function getList(ex: Exchange): void {
  const parsed = parseListQuery(ex);
  const tenant = parsed.ok ? parsed.query.tenant : undefined;
  const auth = gatePage(ex, { tenant });
  if (!auth) return;
  const viewer = viewerOf(ex, auth.session);
  if (!parsed.ok) {
    sendHtml(ex.res, 400, errorPage(400, `参数错误：${parsed.message}`, viewer));
    return;
  }
  if (tenant !== undefined && !canSee(auth.identity, tenant)) {
    sendHtml(ex.res, 403, errorPage(403, '无权访问该租户', viewer));
    return;
  }
  const view = buildListView(ex, auth, parsed.query);
  const redesigned = ex.office.faults.fire('redesign', { identity: auth.session.username, tenant });
  sendHtml(ex.res, 200, redesigned ? listPageV2(view) : listPageV1(view));
  // An applied_then_reverted write is undone once its writer has been shown it settled.
  ex.office.ledger.shownTo(auth.session.sid);
}

/* ---------- detail ---------- */

export function getDetail(ex: Exchange, billNo: string): void {
  const bill = ex.office.ledger.get(billNo);
  const auth = gatePage(ex, { tenant: bill?.tenant, bill: billNo });
  if (!auth) return;
  const viewer = viewerOf(ex, auth.session);
  if (!bill) {
    sendHtml(ex.res, 404, errorPage(404, '差异单不存在', viewer));
    return;
  }
  if (!canSee(auth.identity, bill.tenant)) {
    sendHtml(ex.res, 403, errorPage(403, '无权访问该租户', viewer));
    return;
  }
  const redesigned = ex.office.faults.fire('redesign', { identity: auth.session.username, tenant: bill.tenant, bill: billNo });
  sendHtml(ex.res, 200, redesigned ? detailPageV2(bill, viewer) : detailPageV1(bill, viewer));
  ex.office.ledger.shownTo(auth.session.sid);
}
