import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyTooLargeError, readBody } from '../http/read-body.js';
import { scriptJson } from '../http/html.js';
import { MAX_BODY_BYTES, sendJson, sendText, sleep } from '../simulator/http-util.js';
import { handleControlRequest } from '../simulator/routes/control.js';
import { describeIssues } from '../simulator/schemas.js';
import { DEFAULT_ORGS } from './accounts.js';
import { handleApi } from './api.js';
import { peekContext, type LedgerlyExchange } from './exchange.js';
import { LedgerlyOffice } from './office.js';
import { LedgerlyFaultSpecSchema, LedgerlyOptionsSchema, LedgerlyResetSpecSchema, type LedgerlyOptions } from './schemas.js';

export { DEFAULT_ORGS, LEDGERLY_OPS_USER, ledgerlyUserFor, ledgerlyUsersFor, type LedgerlyUser } from './accounts.js';
export { STATE_TEXT, TYPE_TEXT } from './api.js';
export { discrepancyIdFor } from './seed-data.js';
export * from './schemas.js';

export interface RunningLedgerly {
  /** e.g. http://127.0.0.1:41234 (the app is at `${url}/#/login`) */
  url: string;
  close(): Promise<void>;
}

export const LEDGERLY_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  seed: 1,
  sessionTtlSeconds: 1800,
  asyncDelayMs: 300,
  pageSize: 5,
  clientTimeoutMs: 10_000,
} as const;

/** The hand-written client bundle, served under a content-hashed name like a built SPA's. */
const APP_JS = readFileSync(new URL('./web/app.js', import.meta.url), 'utf8');
const APP_JS_PATH = `/assets/app.${createHash('sha256').update(APP_JS).digest('hex').slice(0, 10)}.js`;

function shell(boot: { layout: 1 | 2; clientTimeoutMs: number }): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ledgerly</title><link rel="icon" href="data:,"></head>
<body><div id="root"></div><noscript>Ledgerly needs JavaScript.</noscript>
<script>window.__LEDGERLY_BOOT__=${scriptJson(boot).value};</script>
<script src="${APP_JS_PATH}"></script></body></html>`;
}

async function dispatch(ex: LedgerlyExchange): Promise<void> {
  const method = ex.req.method ?? 'GET';
  const path = ex.url.pathname;
  if (path.startsWith('/api/')) return handleApi(ex);
  if (method === 'GET' && (path === '/' || path === '/index.html')) {
    // One redesign firing per page load: the whole app renders in the new layout until the next load.
    const layout = ex.office.faults.fire('redesign', peekContext(ex)) ? 2 : 1;
    sendText(ex.res, 200, shell({ layout, clientTimeoutMs: ex.office.clientTimeoutMs }), { 'content-type': 'text/html; charset=utf-8' });
    return;
  }
  if (method === 'GET' && path === APP_JS_PATH) {
    sendText(ex.res, 200, APP_JS, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    });
    return;
  }
  sendText(ex.res, 404, 'Not found');
}

function createListener(office: LedgerlyOffice, controlToken: string | undefined, closing: AbortSignal) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = new Date().toISOString();
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://ledgerly.invalid');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const ex: LedgerlyExchange = { req, res, url, office, closing, body: '' };
    const control = url.pathname === '/__sim' || url.pathname.startsWith('/__sim/');
    if (!control) {
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
        handleControlRequest(ex, controlToken, {
          resetSchema: LedgerlyResetSpecSchema,
          faultSchema: LedgerlyFaultSpecSchema,
          reset: (spec) => office.reset(spec),
          faults: office.faults,
          journal: () => office.book.journal(),
          state: () => office.state(),
          timings: () => office.timings(),
        });
        return;
      }
      const slow = office.faults.fire('slow_ms', peekContext(ex));
      if (slow?.ms) await sleep(slow.ms, closing);
      await dispatch(ex);
    } catch (error) {
      if (res.headersSent || req.destroyed || res.destroyed) {
        res.destroy();
        return;
      }
      if (error instanceof BodyTooLargeError) {
        sendJson(res, 413, { error: { code: 'payload_too_large', message: 'body: larger than 64 KiB' } });
        return;
      }
      console.error('[ledgerly] unexpected error', error);
      sendJson(res, 500, { error: { code: 'internal_error', message: 'Something went wrong on our side.' } });
    }
  };
}

/**
 * Starts Ledgerly, the second in-repo back office: a client-rendered billing
 * SaaS console (hash routes, cards, menus, modals) over a cookie-authenticated
 * JSON API, with the same /__sim control API as the bundled simulator.
 */
export async function startLedgerly(options: LedgerlyOptions = {}): Promise<RunningLedgerly> {
  const parsed = LedgerlyOptionsSchema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid Ledgerly options: ${describeIssues(parsed.error)}`);
  const o = parsed.data;
  const host = o.host ?? LEDGERLY_DEFAULTS.host;
  const office = new LedgerlyOffice(
    {
      seed: o.seed ?? LEDGERLY_DEFAULTS.seed,
      orgs: o.orgs ?? DEFAULT_ORGS.map((id) => ({ id })),
      asyncDelayMs: o.asyncDelayMs ?? LEDGERLY_DEFAULTS.asyncDelayMs,
      sessionTtlSeconds: o.sessionTtlSeconds ?? LEDGERLY_DEFAULTS.sessionTtlSeconds,
    },
    o.pageSize ?? LEDGERLY_DEFAULTS.pageSize,
    o.clientTimeoutMs ?? LEDGERLY_DEFAULTS.clientTimeoutMs,
  );
  const closing = new AbortController();
  const server = createServer(createListener(office, o.controlToken, closing.signal));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? LEDGERLY_DEFAULTS.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        office.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
