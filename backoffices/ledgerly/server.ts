import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BACK_OFFICE_DEFAULTS, startOptions } from '../kit/office-state.js';
import { serveBackOffice, type BackOfficeRoutes, type RunningBackOffice } from '../kit/serve.js';
import { scriptJson } from '../../src/http/html.js';
import { sendJson, sendText } from '../kit/http-util.js';
import { DEFAULT_ORGS } from './accounts.js';
import { handleApi } from './api.js';
import { peekContext, type LedgerlyExchange } from './exchange.js';
import { LedgerlyOffice } from './office.js';
import {
  type LedgerlyFaultSpec,
  LedgerlyFaultSpecSchema,
  LedgerlyOptionsSchema,
  type LedgerlyResetSpec,
  LedgerlyResetSpecSchema,
  type LedgerlyOptions,
} from './schemas.js';

export { DEFAULT_ORGS, LEDGERLY_OPS_USER, ledgerlyUserFor, ledgerlyUsersFor, type LedgerlyUser } from './accounts.js';
export { STATE_TEXT, TYPE_TEXT } from './api.js';
export { discrepancyIdFor } from './seed-data.js';
export * from './schemas.js';

/** The app is at `${url}/#/login`. */
export type RunningLedgerly = RunningBackOffice;

export const LEDGERLY_DEFAULTS = { ...BACK_OFFICE_DEFAULTS, pageSize: 5 } as const;

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

/** Ledgerly's app, API and control API, with its own answers to an oversized body and an error. */
function ledgerlyRoutes(
  office: LedgerlyOffice,
  controlToken: string | undefined,
): BackOfficeRoutes<LedgerlyExchange, LedgerlyResetSpec, LedgerlyFaultSpec> {
  return {
    name: 'ledgerly',
    office,
    exchange: (base) => ({ ...base, office }),
    control: {
      token: controlToken,
      resetSchema: LedgerlyResetSpecSchema,
      faultSchema: LedgerlyFaultSpecSchema,
      journal: () => office.book.journal(),
    },
    peekContext,
    dispatch,
    tooLarge: (res) => sendJson(res, 413, { error: { code: 'payload_too_large', message: 'body: larger than 64 KiB' } }),
    failed: (res) => sendJson(res, 500, { error: { code: 'internal_error', message: 'Something went wrong on our side.' } }),
  };
}

/**
 * Starts Ledgerly, the second in-repo back office: a client-rendered billing
 * SaaS console (hash routes, cards, menus, modals) over a cookie-authenticated
 * JSON API, with the same /__sim control API as the bundled simulator.
 */
export async function startLedgerly(options: LedgerlyOptions = {}): Promise<RunningLedgerly> {
  const config = startOptions('Ledgerly', LedgerlyOptionsSchema, options, LEDGERLY_DEFAULTS);
  const office = new LedgerlyOffice({ ...config, orgs: config.orgs ?? DEFAULT_ORGS.map((id) => ({ id })) });
  return serveBackOffice(ledgerlyRoutes(office, config.controlToken), config, () => office.dispose());
}
