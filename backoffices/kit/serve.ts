import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { BodyTooLargeError, readBody } from '../../src/http/read-body.js';
import { handleControlRequest } from './control.js';
import type { FaultBook, FaultContext, ScopedFaultSpec } from './faults.js';
import { MAX_BODY_BYTES, sendHtml, sendJson, sleep } from './http-util.js';
import { html } from '../../src/http/html.js';
import type { RequestTiming } from './schemas.js';

/** What every back office's request carries through its routes. */
export interface BaseExchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Aborts when the server closes: hung and delayed answers end early. */
  closing: AbortSignal;
  /** The whole request body, read before any delay so a client that gives up cannot stop a slow write. */
  body: string;
  /** Who made the request, once known (for request timings). */
  identity?: string;
  /** The vendor session the request came with (or, for a login, the one it started), once known (for request timings). */
  sessionId?: string;
}

/** What the shared request handling and the control API use of a back office's state. */
export interface ServedOffice<Reset, Fault extends ScopedFaultSpec> {
  faults: FaultBook<Fault>;
  reset(spec: Reset): unknown;
  state(): unknown;
  recordTiming(timing: RequestTiming): void;
  timings(): RequestTiming[];
}

/** How one back office answers, around the request handling every back office shares. */
export interface BackOfficeRoutes<Ex extends BaseExchange, Reset, Fault extends ScopedFaultSpec> {
  /** Names the back office in the log line of an unexpected error. */
  name: string;
  office: ServedOffice<Reset, Fault>;
  exchange(base: BaseExchange): Ex;
  /** /__sim/*: the control API, absent without a token. */
  control: { token: string | undefined; resetSchema: z.ZodType<Reset>; faultSchema: z.ZodType<Fault>; journal(): unknown[] };
  /** What a request is about before routing, for slow_ms. */
  peekContext(ex: Ex): FaultContext;
  dispatch(ex: Ex): Promise<void>;
  /** The answer to a body over MAX_BODY_BYTES. */
  tooLarge(res: ServerResponse): void;
  /** The answer when a route throws. */
  failed(res: ServerResponse): void;
}

/** The request listener: timing, slow_ms, dispatch, and a last line of defence for errors. */
export function createBackOfficeListener<Ex extends BaseExchange, Reset, Fault extends ScopedFaultSpec>(
  routes: BackOfficeRoutes<Ex, Reset, Fault>,
  closing: AbortSignal,
) {
  const { office } = routes;
  const { token, ...control } = routes.control;
  const surface = {
    ...control,
    reset: (spec: Reset) => office.reset(spec),
    faults: office.faults,
    state: () => office.state(),
    timings: () => office.timings(),
  };
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = new Date().toISOString();
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${routes.name}.invalid`);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const ex = routes.exchange({ req, res, url, closing, body: '' });
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
          ...(ex.sessionId ? { sessionId: ex.sessionId } : {}),
        });
      });
    }
    try {
      ex.body = await readBody(req, MAX_BODY_BYTES);
      if (control) {
        handleControlRequest(ex, token, surface);
        return;
      }
      const method = req.method ?? 'GET';
      // The vendor's rate limit: 429 with Retry-After before anything else happens (nothing is read or committed).
      const limited = office.faults.fire('rate_limited', { ...routes.peekContext(ex), write: method !== 'GET' && method !== 'HEAD' });
      if (limited) {
        sendRateLimited(req, res, limited.ms);
        return;
      }
      const slow = office.faults.fire('slow_ms', routes.peekContext(ex));
      if (slow?.ms) await sleep(slow.ms, closing);
      await routes.dispatch(ex);
    } catch (error) {
      if (res.headersSent || req.destroyed || res.destroyed) {
        // The client went away (or the answer was half sent): nobody is left to tell.
        res.destroy();
        return;
      }
      if (error instanceof BodyTooLargeError) {
        routes.tooLarge(res);
        return;
      }
      console.error(`[${routes.name}] unexpected error`, error);
      routes.failed(res);
    }
  };
}

/** A 429 as the vendor's gateway sends it: Retry-After in whole seconds (`ms` of the fault, 1 s by default). */
function sendRateLimited(req: IncomingMessage, res: ServerResponse, ms: number | undefined): void {
  const headers = { 'retry-after': String(Math.max(1, Math.ceil((ms ?? 1000) / 1000))) };
  if ((req.headers.accept ?? '').includes('text/html')) {
    sendHtml(
      res,
      429,
      html`<html lang="zh-CN"><head><meta charset="utf-8"><title>429</title></head><body><h1>429 请求过于频繁</h1><p>请稍后再试。</p></body></html>`,
      headers,
    );
  } else {
    sendJson(res, 429, { error: 'rate_limited', message: '请求过于频繁，请稍后再试' }, headers);
  }
}

export interface RunningBackOffice {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

/**
 * Listens with `routes` on host:port (0 = any free port). close() stops
 * delayed answers, drops open connections and then calls `dispose`.
 */
export async function serveBackOffice<Ex extends BaseExchange, Reset, Fault extends ScopedFaultSpec>(
  routes: BackOfficeRoutes<Ex, Reset, Fault>,
  where: { host: string; port: number },
  dispose: () => void,
): Promise<RunningBackOffice> {
  const closing = new AbortController();
  const server = createServer(createBackOfficeListener(routes, closing.signal));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${where.host.includes(':') ? `[${where.host}]` : where.host}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
