import iconv from 'iconv-lite';
import { z } from 'zod';
import { canSee, type Identity } from '../accounts.js';
import { sendHtml, sendJson } from '../../kit/http-util.js';
import { errorPage } from '../pages/layout.js';
import { formatYuan, KIND_LABELS, STATUS_LABELS } from '../format.js';
import type { Bill } from '../schemas.js';
import { bearerToken, viewerOf, type Exchange } from './exchange.js';
import { gatePage } from './ui-pages.js';

const HEADER = ['bill_no', 'tenant', 'kind', 'amount_cents', 'status', 'updated_at'];
/** The same file as a Chinese legacy system exports it: labels instead of codes, amounts as shown on the pages. */
const HEADER_ZH = ['单号', '租户', '差异类型', '金额', '状态', '更新时间'];

/** The encodings the file can be asked in; the Unicode ones carry a byte-order mark, GBK and GB18030 have none. */
export const SETTLEMENT_ENCODINGS = ['utf-8', 'gbk', 'gb18030', 'utf-16le', 'utf-16be'] as const;

const SettlementQuery = z.object({
  tenant: z.string().max(40).default(''),
  encoding: z.enum(SETTLEMENT_ENCODINGS, { error: `encoding 只能是 ${SETTLEMENT_ENCODINGS.join('、')}` }).default('utf-8'),
  labels: z.enum(['codes', 'zh'], { error: 'labels 只能是 codes 或 zh' }).default('codes'),
});
type SettlementQuery = z.infer<typeof SettlementQuery>;

/** ￥1,234.50: legacy Chinese systems write the full-width yuan sign, which GBK has (the half-width ¥ it has not). */
const fullwidthYuan = (cents: number) => formatYuan(cents).replace('¥', '￥');

function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The vendor's settlement export: UTF-8 with BOM and CRLF, as Excel on Windows wants it (labels: zh, the legacy layout). */
export function settlementCsv(bills: readonly Bill[], labels: SettlementQuery['labels'] = 'codes'): string {
  const zh = labels === 'zh';
  const lines = [(zh ? HEADER_ZH : HEADER).join(',')];
  for (const b of bills) {
    const row = zh
      ? [b.billNo, b.tenant, KIND_LABELS[b.kind], fullwidthYuan(b.amountCents), STATUS_LABELS[b.status], b.updatedAt]
      : [b.billNo, b.tenant, b.kind, b.amountCents, b.status, b.updatedAt];
    lines.push(row.map(csvField).join(','));
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

/** The file's bytes in the asked encoding: the BOM stays for the Unicode encodings and is dropped for GBK and GB18030. */
export function encodeSettlement(text: string, encoding: SettlementQuery['encoding']): Buffer {
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8');
  const legacy = encoding === 'gbk' || encoding === 'gb18030';
  return iconv.encode(legacy ? text.replace(/^\uFEFF/, '') : text, encoding);
}

/**
 * GET /settlement.csv?tenant=t[&encoding=gbk][&labels=zh] — live state of every bill of the tenant.
 * Downloaded from the list page with the session cookie; the same file is
 * also served to an API bearer token so a readback can use it without a browser.
 */
export function getSettlement(ex: Exchange): void {
  const parsed = SettlementQuery.safeParse(Object.fromEntries(ex.url.searchParams));
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
    const auth = gatePage(ex, { tenant: ex.url.searchParams.get('tenant') || undefined });
    if (!auth) return;
    identity = auth.identity;
    const viewer = viewerOf(ex, auth.session);
    fail = (status, message) => sendHtml(ex.res, status, errorPage(status, message, viewer));
  }
  if (!parsed.success) {
    fail(400, parsed.error.issues.map((i) => i.message).join('；'));
    return;
  }
  const { tenant, encoding, labels } = parsed.data;
  if (!tenant) {
    fail(400, '请选择租户（参数 tenant 必填）');
    return;
  }
  if (!canSee(identity, tenant)) {
    fail(403, '无权访问该租户');
    return;
  }
  const body = encodeSettlement(settlementCsv(ex.office.ledger.forTenant(tenant), labels), encoding);
  ex.res.writeHead(200, {
    'content-type': `text/csv; charset=${encoding}`,
    'content-disposition': `attachment; filename="settlement-${tenant}.csv"`,
    'content-length': String(body.length),
    'cache-control': 'no-store',
  });
  ex.res.end(body);
}
