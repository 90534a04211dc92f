import { canSee, type Identity } from '../accounts.js';
import { sendHtml, sendJson } from '../../kit/http-util.js';
import { errorPage } from '../pages/layout.js';
import type { Bill } from '../schemas.js';
import { bearerToken, viewerOf, type Exchange } from './exchange.js';
import { gatePage } from './ui-pages.js';

const HEADER = ['bill_no', 'tenant', 'kind', 'amount_cents', 'status', 'updated_at'];

function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The vendor's settlement export: UTF-8 with BOM and CRLF, as Excel on Windows wants it. */
export function settlementCsv(bills: readonly Bill[]): string {
  const lines = [HEADER.join(',')];
  for (const b of bills) {
    lines.push([b.billNo, b.tenant, b.kind, b.amountCents, b.status, b.updatedAt].map(csvField).join(','));
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

/**
 * GET /settlement.csv?tenant=t — live state of every bill of the tenant.
 * Downloaded from the list page with the session cookie; the same file is
 * also served to an API bearer token so a readback can use it without a browser.
 */
export function getSettlement(ex: Exchange): void {
  const tenant = ex.url.searchParams.get('tenant') ?? '';
  const token = bearerToken(ex);
  let identity: Identity;
  let fail: (status: number, message: string) => void;
  if (token !== undefined) {
    const account = ex.office.accountByToken(token);
    if (!account) {
      sendJson(ex.res, 401, { error: 'unauthorized', message: 'invalid bearer token' }, { 'www-authenticate': 'Bearer' });
      return;
    }
    ex.identity = account.username;
    identity = ex.office.identityFor(account);
    fail = (status, message) => sendJson(ex.res, status, { error: status === 403 ? 'forbidden' : 'invalid_request', message });
  } else {
    const auth = gatePage(ex, { tenant: tenant || undefined });
    if (!auth) return;
    identity = auth.identity;
    const viewer = viewerOf(ex, auth.session);
    fail = (status, message) => sendHtml(ex.res, status, errorPage(status, message, viewer));
  }
  if (!tenant) {
    fail(400, '请选择租户（参数 tenant 必填）');
    return;
  }
  if (!canSee(identity, tenant)) {
    fail(403, '无权访问该租户');
    return;
  }
  const body = Buffer.from(settlementCsv(ex.office.ledger.forTenant(tenant)), 'utf8');
  ex.res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="settlement-${tenant}.csv"`,
    'content-length': String(body.length),
    'cache-control': 'no-store',
  });
  ex.res.end(body);
}
