import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, normalize, sep } from 'node:path';
import { z } from 'zod';
import { BACK_OFFICE_DEFAULTS, startOptions } from '../kit/office-state.js';
import { PENDING_COOKIE } from '../kit/second-factor.js';
import { serveBackOffice, type BackOfficeRoutes, type RunningBackOffice } from '../kit/serve.js';
import { redirect, sendHtml, sendJson, sendText } from '../kit/http-util.js';
import { parseCookies } from '../../src/http/cookies.js';
import { DEFAULT_TENANTS, TOTP_PERIOD_SECONDS } from './accounts.js';
import { handleApi } from './api.js';
import { peekContext, requireSession, SESSION_COOKIE, SESSION_EXPIRED_TEXT, sidOf, type SettloExchange } from './exchange.js';
import { SettloOffice } from './office.js';
import { billPage, billsPage, codePage, GRID_SCRIPT, loginPage, messagePage, portalPage, SHOELACE_BASE } from './pages.js';
import {
  BILL_NO_PATTERN,
  type SettloFaultSpec,
  SettloFaultSpecSchema,
  type SettloOptions,
  SettloOptionsSchema,
  type SettloResetSpec,
  SettloResetSpecSchema,
} from './schemas.js';

export { DEFAULT_TENANTS, settloTotpSecretFor, settloUserFor, settloUsersFor, TOTP_PERIOD_SECONDS, type SettloUser } from './accounts.js';
export { billNoFor } from './seed-data.js';
export { KIND_TEXT, STATUS_TEXT } from './words.js';
export * from './schemas.js';

/** The portal is at `${url}/login`. */
export type RunningSettlo = RunningBackOffice;

export const SETTLO_DEFAULTS = {
  ...BACK_OFFICE_DEFAULTS,
  pageSize: 10,
  undoWindowSeconds: 5,
  rateLimit: { max: 30, windowSeconds: 10 },
  allowTopLevelWork: false,
} as const;

/*
 * The UI libraries are served from the installed packages, so the portal works with no network: AG Grid's
 * UMD bundle (MIT, row virtualisation built in) and Shoelace's self-contained CDN build (MIT web components).
 */
const require = createRequire(import.meta.url);
const GRID_FILE = join(packageRoot('ag-grid-community'), 'dist', 'ag-grid-community.min.js');
const SHOELACE_ROOT = join(packageRoot('@shoelace-style/shoelace'), 'cdn');
/** The installed package's folder, found the way Node looks packages up (their exports name no files we serve). */
function packageRoot(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    if (existsSync(join(dir, name, 'package.json'))) return join(dir, name);
  }
  throw new Error(`package ${name} is not installed (npm ci)`);
}
const WORK_JS = readFileSync(new URL('./web/work.js', import.meta.url), 'utf8');
const STATIC_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

function sendFile(ex: SettloExchange, file: string): void {
  let body: Buffer;
  try {
    body = readFileSync(file);
  } catch {
    sendText(ex.res, 404, '404 Not Found');
    return;
  }
  const type = STATIC_TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream';
  ex.res.writeHead(200, { 'content-type': type, 'content-length': String(body.length), 'cache-control': 'public, max-age=3600' });
  ex.res.end(body);
}

/** A file under Shoelace's CDN build; anything climbing out of it is a 404. */
function shoelaceFile(ex: SettloExchange, rest: string): void {
  const file = normalize(join(SHOELACE_ROOT, decodeURIComponent(rest)));
  if (file.startsWith(SHOELACE_ROOT + sep)) sendFile(ex, file);
  else sendText(ex.res, 404, '404 Not Found');
}

const LoginFormSchema = z.object({ username: z.string().max(100).default(''), password: z.string().max(200).default('') });
const CodeFormSchema = z.object({ code: z.string().max(16).default('') });

function form(ex: SettloExchange): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(ex.body));
}

function postLogin(ex: SettloExchange): void {
  const parsed = LoginFormSchema.safeParse(form(ex));
  const { username, password } = parsed.success ? parsed.data : { username: '', password: '' };
  const user = ex.office.userByUsername(username.trim());
  if (!user || user.password !== password) {
    sendHtml(ex.res, 401, loginPage({ message: '用户名或密码错误', username }));
    return;
  }
  ex.identity = user.username;
  const token = ex.office.pendingLogins.create(user.username, undefined);
  redirect(ex.res, '/login/totp', { 'set-cookie': `${PENDING_COOKIE}=${token}; Path=/login; HttpOnly; SameSite=Lax` });
}

function pendingToken(ex: SettloExchange): string | undefined {
  return parseCookies(ex.req.headers.cookie).get(PENDING_COOKIE);
}

function postCode(ex: SettloExchange): void {
  const token = pendingToken(ex);
  const pending = ex.office.pendingLogins.get(token);
  const user = pending && ex.office.userByUsername(pending.username);
  if (!token || !user) {
    redirect(ex.res, '/login');
    return;
  }
  ex.identity = user.username;
  const parsed = CodeFormSchema.safeParse(form(ex));
  if (!ex.office.pendingLogins.answer(token, user.totpSecret, TOTP_PERIOD_SECONDS, parsed.success ? parsed.data.code.trim() : '')) {
    sendHtml(ex.res, 401, codePage({ failed: true }));
    return;
  }
  ex.office.sessions.destroy(sidOf(ex));
  const session = ex.office.sessions.create(user.username);
  redirect(ex.res, '/portal', {
    'set-cookie': `${SESSION_COOKIE}=${session.sid}; Path=/; HttpOnly; SameSite=Lax`,
  });
}

/**
 * The work area belongs in the portal's frame. A browser opening it as a top-level page (Sec-Fetch-Dest:
 * document) is sent to the portal, unless the allowTopLevelWork control is on.
 */
function outsideFrame(ex: SettloExchange): boolean {
  if (ex.office.controls.allowTopLevelWork || ex.req.headers['sec-fetch-dest'] !== 'document') return false;
  redirect(ex.res, '/portal');
  return true;
}

function workPage(ex: SettloExchange, path: string): void {
  if (outsideFrame(ex)) return;
  const one = /^\/portal\/work\/bills\/([^/]+)$/.exec(path);
  const signed = requireSession(ex, 'page', one?.[1] && BILL_NO_PATTERN.test(one[1]) ? one[1] : undefined);
  if (!signed) return;
  if (one) {
    const bill = one[1] && BILL_NO_PATTERN.test(one[1]) ? ex.office.book.get(one[1]) : undefined;
    if (!bill || bill.tenant !== signed.user.tenant) {
      sendHtml(
        ex.res,
        404,
        messagePage('单据不存在', `单号 ${one[1] ?? ''} 不存在或不属于当前机构。`, { href: '/portal/work/bills', text: '返回列表' }),
      );
      return;
    }
    sendHtml(ex.res, 200, billPage(bill, ex.office.tenantName(bill.tenant)));
    return;
  }
  const params = ex.url.searchParams;
  const layout = ex.office.faults.fire('redesign', peekContext(ex)) ? 2 : 1;
  sendHtml(
    ex.res,
    200,
    billsPage({
      layout,
      view: params.get('view') === 'paged' ? 'paged' : 'scroll',
      q: (params.get('q') ?? '').slice(0, 100),
      status: /^[A-Z]{1,12}$/.test(params.get('status') ?? '') ? (params.get('status') ?? '') : '',
      pageSize: ex.office.pageSize,
      undoWindowSeconds: ex.office.controls.undoWindowSeconds,
      clientTimeoutMs: ex.office.clientTimeoutMs,
      shoelaceBase: SHOELACE_BASE,
    }),
  );
}

async function dispatch(ex: SettloExchange): Promise<void> {
  const method = ex.req.method ?? 'GET';
  const path = ex.url.pathname;
  if (path.startsWith('/portal/api/')) return handleApi(ex);
  if (method === 'GET' && path === GRID_SCRIPT) return sendFile(ex, GRID_FILE);
  if (method === 'GET' && path.startsWith(`${SHOELACE_BASE}/`)) return shoelaceFile(ex, path.slice(SHOELACE_BASE.length + 1));
  if (method === 'GET' && path === '/static/work.js') {
    return sendText(ex.res, 200, WORK_JS, { 'content-type': 'text/javascript; charset=utf-8' });
  }
  const route = `${method} ${path}`;
  switch (route) {
    case 'GET /':
      return redirect(ex.res, '/portal');
    case 'GET /login':
      return sendHtml(ex.res, 200, loginPage(ex.url.searchParams.get('expired') === '1' ? { message: SESSION_EXPIRED_TEXT } : {}));
    case 'POST /login':
      return postLogin(ex);
    case 'GET /login/totp':
      return ex.office.pendingLogins.get(pendingToken(ex))
        ? sendHtml(ex.res, 200, codePage({ failed: false }))
        : redirect(ex.res, '/login');
    case 'POST /login/totp':
      return postCode(ex);
    case 'GET /logout':
      ex.office.sessions.destroy(sidOf(ex));
      return redirect(ex.res, '/login', { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` });
    case 'GET /portal': {
      const signed = requireSession(ex, 'page');
      if (signed) sendHtml(ex.res, 200, portalPage(signed.user, ex.office.tenantName(signed.user.tenant)));
      return;
    }
  }
  if (method === 'GET' && path.startsWith('/portal/work/')) return workPage(ex, path);
  sendHtml(ex.res, 404, messagePage('404', '页面不存在'));
}

function settloRoutes(
  office: SettloOffice,
  controlToken: string | undefined,
): BackOfficeRoutes<SettloExchange, SettloResetSpec, SettloFaultSpec> {
  return {
    name: 'settlo',
    office,
    exchange: (base) => ({ ...base, office }),
    control: {
      token: controlToken,
      resetSchema: SettloResetSpecSchema,
      faultSchema: SettloFaultSpecSchema,
      journal: () => office.book.journal(),
    },
    peekContext,
    dispatch,
    tooLarge: (res) => sendJson(res, 413, { error: 'payload_too_large', message: '请求内容过大' }),
    failed: (res) => sendJson(res, 500, { error: 'internal_error', message: '系统繁忙，请稍后再试' }),
  };
}

/**
 * Starts Settlo, the third in-repo back office: a legacy settlement portal (top bar, menu, the work area in
 * an iframe) with a password-then-TOTP login, a virtualising data grid, web-component dialogs, optimistic
 * writes held in an undo window, a per-user rate limit, a GBK CSV export, and the control API every in-repo
 * back office has.
 */
export async function startSettlo(options: SettloOptions = {}): Promise<RunningSettlo> {
  const config = startOptions('Settlo', SettloOptionsSchema, options, SETTLO_DEFAULTS);
  const office = new SettloOffice({ ...config, tenants: config.tenants ?? DEFAULT_TENANTS.map((id) => ({ id })) });
  return serveBackOffice(settloRoutes(office, config.controlToken), config, () => office.dispose());
}
