import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BackOffice } from './back-office.js';
import { MAX_BODY_BYTES, redirect, sendHtml, sendJson, sleep } from './http-util.js';
import { BodyTooLargeError, readBody } from '../http/read-body.js';
import { errorPage } from './pages/layout.js';
import { handleApi } from './routes/api.js';
import { handleControl } from './routes/control.js';
import { peekContext, type Exchange } from './routes/exchange.js';
import { getSettlement } from './routes/settlement.js';
import { getDetail, getList, getLogin, logout, postLogin } from './routes/ui-pages.js';
import { getRefundPage, postMarkOrUnmark, postRefund } from './routes/ui-writes.js';
import { BILL_NO_PATTERN } from './schemas.js';

export interface RouterOptions {
  controlToken?: string;
  closing: AbortSignal;
}

type Handler = (ex: Exchange) => void | Promise<void>;

/** Exact paths: method -> handler. */
const PAGES: Record<string, Partial<Record<string, Handler>>> = {
  '/login': { GET: getLogin, POST: postLogin },
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

/** The request listener: timing, slow_ms, dispatch, and a last line of defence for errors. */
export function createRequestListener(office: BackOffice, options: RouterOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = new Date().toISOString();
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://simulator.invalid');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const ex: Exchange = { req, res, url, office, closing: options.closing, body: '' };
    const control = url.pathname === '/__sim' || url.pathname.startsWith('/__sim/');
    if (!control) {
      // Control traffic is not vendor traffic: benchmarks read timings to separate vendor wait from client time.
      res.once('close', () => {
        office.recordTiming({
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          status: res.writableFinished ? res.statusCode : 499,
          startedAt,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
          ...(ex.identity ? { identity: ex.identity } : {}),
        });
      });
    }
    try {
      ex.body = await readBody(req, MAX_BODY_BYTES);
      if (control) {
        await handleControl(ex, options.controlToken);
        return;
      }
      const slow = office.faults.fire('slow_ms', peekContext(ex));
      if (slow?.ms) await sleep(slow.ms, options.closing);
      await dispatch(ex);
    } catch (error) {
      if (res.headersSent || req.destroyed || res.destroyed) {
        // The client went away (or the answer was half sent): nobody is left to tell.
        res.destroy();
        return;
      }
      if (error instanceof BodyTooLargeError) {
        sendJson(res, 413, { error: 'payload_too_large', message: 'body: larger than 64 KiB' });
        return;
      }
      console.error('[simulator] unexpected error', error);
      sendHtml(res, 500, errorPage(500, '系统繁忙，请稍后再试'));
    }
  };
}
