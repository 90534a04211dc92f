import type { BackOfficeRoutes } from '../kit/serve.js';
import type { BackOffice } from './back-office.js';
import { redirect, sendHtml, sendJson } from '../kit/http-util.js';
import { errorPage } from './pages/layout.js';
import { handleApi } from './routes/api.js';
import { peekContext, type Exchange } from './routes/exchange.js';
import { getSettlement } from './routes/settlement.js';
import { getSecondFactor, postSecondFactor } from './routes/second-factor.js';
import { getDetail, getList, getLogin, logout, postLogin } from './routes/ui-pages.js';
import { getRefundPage, postMarkOrUnmark, postRefund } from './routes/ui-writes.js';
import { portalDispatch } from './routes/portal.js';
import { BILL_NO_PATTERN, type FaultSpec, FaultSpecSchema, type ResetSpec, ResetSpecSchema } from './schemas.js';

type Handler = (ex: Exchange) => void | Promise<void>;

/** Exact paths: method -> handler. */
const PAGES: Record<string, Partial<Record<string, Handler>>> = {
  '/login': { GET: getLogin, POST: postLogin },
  '/login/2fa': { GET: getSecondFactor, POST: postSecondFactor },
  '/logout': { GET: logout, POST: logout },
  '/diff/list': { GET: getList },
  '/settlement.csv': { GET: getSettlement },
};

/** Sub-paths of /diff/<billNo>. */
const BILL_ROUTES: Record<string, Partial<Record<string, (ex: Exchange, billNo: string) => void | Promise<void>>>> = {
  '': { GET: getDetail },
  '/mark': { POST: (ex, billNo) => postMarkOrUnmark(ex, billNo, 'mark') },
  '/unmark': { POST: (ex, billNo) => postMarkOrUnmark(ex, billNo, 'unmark') },
  '/refund': { GET: (ex, billNo) => getRefundPage(ex, billNo, false), POST: postRefund },
  '/refund/form': { GET: (ex, billNo) => getRefundPage(ex, billNo, true) },
};

function notFound(ex: Exchange): void {
  sendHtml(ex.res, 404, errorPage(404, '页面不存在'));
}

function methodNotAllowed(ex: Exchange, allowed: string[]): void {
  sendHtml(ex.res, 405, errorPage(405, '不支持的请求方式'), { allow: allowed.join(', ') });
}

async function dispatch(ex: Exchange): Promise<void> {
  const method = ex.req.method ?? 'GET';
  const path = ex.url.pathname;
  if (path === '/' || path === '/diff' || path === '/diff/') return redirect(ex.res, '/diff/list');
  if (path === '/favicon.ico') {
    ex.res.writeHead(204).end();
    return;
  }
  if (path.startsWith('/api/')) return handleApi(ex);
  const page = PAGES[path];
  if (page) {
    const handler = page[method];
    return handler ? handler(ex) : methodNotAllowed(ex, Object.keys(page));
  }
  const billMatch = /^\/diff\/([^/]+)(\/.*)?$/.exec(path);
  // Anything that is not exactly a bill number is a 404 and nothing else happens.
  if (!billMatch?.[1] || !BILL_NO_PATTERN.test(billMatch[1])) return notFound(ex);
  const routes = BILL_ROUTES[billMatch[2] ?? ''];
  if (!routes) return notFound(ex);
  const handler = routes[method];
  return handler ? handler(ex, billMatch[1]) : methodNotAllowed(ex, Object.keys(routes));
}

/** The simulator's pages, API and control API, with its own answers to an oversized body and an error. */
export function simulatorRoutes(
  office: BackOffice,
  controlToken: string | undefined,
  /** `portal`: the work pages are shown inside a portal's iframe (routes/portal.ts). */
  layout: 'plain' | 'portal' = 'plain',
): BackOfficeRoutes<Exchange, ResetSpec, FaultSpec> {
  return {
    name: 'simulator',
    office,
    exchange: (base) => ({ ...base, office }),
    control: { token: controlToken, resetSchema: ResetSpecSchema, faultSchema: FaultSpecSchema, journal: () => office.ledger.journal() },
    peekContext,
    dispatch: layout === 'portal' ? async (ex) => (portalDispatch(ex) ? undefined : dispatch(ex)) : dispatch,
    tooLarge: (res) => sendJson(res, 413, { error: 'payload_too_large', message: 'body: larger than 64 KiB' }),
    failed: (res) => sendHtml(res, 500, errorPage(500, '系统繁忙，请稍后再试')),
  };
}
