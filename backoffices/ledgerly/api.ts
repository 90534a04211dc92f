import { z } from 'zod';
import { parseYuan, plainYuan } from '../kit/yuan.js';
import { sendJson, sendText } from '../kit/http-util.js';
import { hangAfterCommit } from '../kit/http-util.js';
import { describeIssues, parseJsonText } from '../kit/schemas.js';
import type { Actor } from './book.js';
import { requireSession, SESSION_COOKIE, sendError, sidOf, type LedgerlyExchange, type Signed } from './exchange.js';
import {
  DISCREPANCY_ID_PATTERN,
  DiscrepancyStateSchema,
  type Discrepancy,
  type DiscrepancyState,
  type DiscrepancyType,
  type LedgerlyAction,
} from './schemas.js';

/**
 * The JSON API the page itself uses, authenticated by the session cookie.
 * Errors are `{ error: { code, message } }`; a missing, expired or revoked
 * session is 401. A discrepancy of another org is a 404, as if it did not exist.
 */

/** The words the UI and the export use for each state and type. */
export const STATE_TEXT: Record<DiscrepancyState, string> = {
  open: 'Open',
  under_review: 'Under review',
  resolved: 'Resolved',
  refund_pending: 'Refund pending',
  refunded: 'Refunded',
};

export const TYPE_TEXT: Record<DiscrepancyType, string> = {
  billing_error: 'Billing error',
  duplicate_charge: 'Duplicate charge',
};

function publicRecord(ex: LedgerlyExchange, record: Discrepancy, withHistory: boolean) {
  return {
    id: record.id,
    organization: ex.office.orgSummary(record.org),
    customer: record.customer,
    invoice: record.invoice,
    type: record.type,
    amount: plainYuan(record.amountCents),
    currency: 'USD',
    state: record.state,
    resolution_reason: record.resolutionReason,
    updated_at: record.updatedAt,
    ...(withHistory ? { history: record.history.map((h) => ({ at: h.at, action: h.action, actor: h.actor })) } : {}),
  };
}

function parseJsonBody<T extends z.ZodType>(ex: LedgerlyExchange, schema: T): z.infer<T> | undefined {
  const parsed = parseJsonText(ex.body || 'null', schema);
  if (parsed.ok) return parsed.data;
  sendError(ex, 400, 'invalid_request', parsed.message);
  return undefined;
}

function meOf(ex: LedgerlyExchange, signed: Signed) {
  return {
    user: { email: signed.user.username, name: signed.user.displayName },
    organization: ex.office.orgSummary(signed.org),
    organizations: ex.office.orgsOf(signed.user).map((o) => ex.office.orgSummary(o)),
  };
}

/* ---------- session ---------- */

const LoginSchema = z.object({
  email: z.string().max(200),
  password: z.string().max(200),
});

function sessionCookie(sid: string): string {
  return `${SESSION_COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Lax`;
}

function postSession(ex: LedgerlyExchange): void {
  const body = parseJsonBody(ex, LoginSchema);
  if (!body) return;
  const user = ex.office.userByUsername(body.email.trim().toLowerCase());
  if (!user || user.password !== body.password) {
    sendError(ex, 401, 'invalid_credentials', 'Incorrect email or password.');
    return;
  }
  const session = ex.office.sessions.create(user.username);
  const org = ex.office.orgsOf(user)[0];
  if (!org) {
    sendError(ex, 403, 'no_organization', 'This user belongs to no organization.');
    return;
  }
  ex.office.sessionOrg.set(session.sid, org);
  ex.identity = user.username;
  sendJson(ex.res, 200, meOf(ex, { session, user, org }), { 'set-cookie': sessionCookie(session.sid) });
}

function deleteSession(ex: LedgerlyExchange): void {
  const sid = sidOf(ex);
  ex.office.sessions.destroy(sid);
  if (sid) ex.office.sessionOrg.delete(sid);
  ex.res.writeHead(204, { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`, 'cache-control': 'no-store' });
  ex.res.end();
}

const SwitchOrgSchema = z.strictObject({ organization: z.string().min(1).max(40) });

function putOrganization(ex: LedgerlyExchange): void {
  const signed = requireSession(ex);
  if (!signed) return;
  const body = parseJsonBody(ex, SwitchOrgSchema);
  if (!body) return;
  if (!ex.office.orgsOf(signed.user).includes(body.organization)) {
    sendError(ex, 403, 'forbidden', `You are not a member of organization "${body.organization}".`);
    return;
  }
  ex.office.sessionOrg.set(signed.session.sid, body.organization);
  sendJson(ex.res, 200, meOf(ex, { ...signed, org: body.organization }));
}

/* ---------- reads ---------- */

const ListQuerySchema = z.object({
  q: z.string().max(100).default(''),
  state: z.union([z.literal(''), DiscrepancyStateSchema]).default(''),
  page: z.coerce.number().int('page must be a whole number').min(1, 'page must be at least 1').default(1),
  per_page: z.coerce.number().int().min(1, 'per_page must be 1-100').max(100, 'per_page must be 1-100').optional(),
});

function filtered(ex: LedgerlyExchange, signed: Signed): { records: Discrepancy[]; query: z.infer<typeof ListQuerySchema> } | undefined {
  const parsed = ListQuerySchema.safeParse(Object.fromEntries(ex.url.searchParams));
  if (!parsed.success) {
    sendError(ex, 400, 'invalid_request', describeIssues(parsed.error, 'query'));
    return undefined;
  }
  const query = parsed.data;
  const needle = query.q.trim().toLowerCase();
  const records = ex.office.book
    .forTenant(signed.org)
    .filter((r) => query.state === '' || r.state === query.state)
    .filter((r) => needle === '' || [r.id, r.customer, r.invoice].some((v) => v.toLowerCase().includes(needle)));
  return { records, query };
}

function getList(ex: LedgerlyExchange): void {
  const signed = requireSession(ex);
  if (!signed) return;
  const result = filtered(ex, signed);
  if (!result) return;
  const perPage = result.query.per_page ?? ex.office.pageSize;
  const start = (result.query.page - 1) * perPage;
  const page = result.records.slice(start, start + perPage);
  sendJson(ex.res, 200, {
    data: page.map((r) => publicRecord(ex, r, false)),
    meta: { page: result.query.page, per_page: perPage, total: result.records.length, has_more: start + perPage < result.records.length },
  });
}

function csvCell(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

function getExport(ex: LedgerlyExchange): void {
  const signed = requireSession(ex);
  if (!signed) return;
  const result = filtered(ex, signed);
  if (!result) return;
  const header = ['ID', 'Organization', 'Customer', 'Invoice', 'Type', 'Amount', 'Currency', 'Status', 'Resolution reason', 'Last updated'];
  const lines = [header, ...result.records.map((r) => exportRow(ex, r))].map((cells) => cells.map(csvCell).join(','));
  sendText(ex.res, 200, `\uFEFF${lines.join('\r\n')}\r\n`, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="discrepancies-${signed.org}.csv"`,
  });
}

function exportRow(ex: LedgerlyExchange, r: Discrepancy): string[] {
  return [
    r.id,
    ex.office.orgSummary(r.org).name,
    r.customer,
    r.invoice,
    TYPE_TEXT[r.type],
    plainYuan(r.amountCents),
    'USD',
    STATE_TEXT[r.state],
    r.resolutionReason ?? '',
    r.updatedAt,
  ];
}

/** The record if it exists in the session's org; otherwise a 404 that does not say whether it exists elsewhere. */
function scoped(ex: LedgerlyExchange, signed: Signed, id: string): Discrepancy | undefined {
  const record = ex.office.book.get(id);
  if (!record || record.org !== signed.org) {
    sendError(ex, 404, 'not_found', `Discrepancy ${id} not found.`);
    return undefined;
  }
  return record;
}

function getOne(ex: LedgerlyExchange, id: string): void {
  const signed = requireSession(ex, id);
  if (!signed) return;
  const record = scoped(ex, signed, id);
  if (record) sendJson(ex.res, 200, { data: publicRecord(ex, record, true) });
}

/* ---------- writes ---------- */

const EditSchema = z.strictObject({ resolution_reason: z.string({ error: 'resolution_reason must be a string' }).max(2000) });
const RefundSchema = z.strictObject({ confirm_amount: z.string({ error: 'confirm_amount must be a string' }).max(40) });
const EmptySchema = z.union([z.null(), z.strictObject({})]);

/**
 * Order of checks on every write: session (missing / expired / revoked),
 * record in the session's org, permission_denied, error_500, state (409),
 * input (422), half_success, commit, commit_then_timeout.
 */
async function write(ex: LedgerlyExchange, id: string, action: LedgerlyAction): Promise<void> {
  const signed = requireSession(ex, id);
  if (!signed) return;
  const record = scoped(ex, signed, id);
  if (!record) return;
  const { office } = ex;
  const context = { identity: signed.user.username, tenant: record.org, bill: id };
  let reason: string | undefined;
  let detail: Record<string, unknown> | undefined;
  if (action === 'edit') {
    const body = parseJsonBody(ex, EditSchema);
    if (!body) return;
    reason = body.resolution_reason.trim();
  } else if (action === 'refund') {
    const body = parseJsonBody(ex, RefundSchema);
    if (!body) return;
    const typed = parseYuan(body.confirm_amount);
    if (typed === null) return sendError(ex, 422, 'invalid_amount', 'Type the amount as digits with up to two decimals, e.g. 1234.50.');
    if (typed !== record.amountCents)
      return sendError(ex, 422, 'amount_mismatch', 'The amount you typed does not match the discrepancy amount.');
    detail = { amountCents: typed };
  } else if (parseJsonBody(ex, EmptySchema) === undefined) {
    return;
  }
  if (office.faults.fire('permission_denied', context))
    return sendError(ex, 403, 'permission_denied', 'You don’t have permission to do this.');
  if (office.faults.fire('error_500', context))
    return sendError(ex, 500, 'internal_error', 'Something went wrong on our side. Try again later.');
  const refusal = office.book.refusal(action, id);
  if (refusal) return sendError(ex, refusal.status, refusal.code, refusal.message);
  if (action === 'edit' && !reason) return sendError(ex, 422, 'reason_required', 'Resolution reason is required.');
  if (office.faults.fire('half_success', context)) {
    // Answers exactly like success with the record as it would be, and changes nothing.
    sendJson(ex.res, 200, {
      data: { ...publicRecord(ex, record, true), ...wouldBe(action, reason), updated_at: new Date().toISOString() },
    });
    return;
  }
  const hang = office.faults.fire('commit_then_timeout', context);
  const actor: Actor = { identity: signed.user.username, sessionId: signed.session.sid };
  office.book.commit({
    action,
    id,
    actor,
    ...(reason !== undefined ? { resolutionReason: reason } : {}),
    settleDelayMs: action === 'resolve' || action === 'refund' ? office.settleDelayMs(context) : 0,
    ...(detail || hang ? { detail: { ...detail, ...(hang ? { fault: 'commit_then_timeout' } : {}) } } : {}),
  });
  if (hang) {
    await hangAfterCommit(ex, hang.ms, () => sendError(ex, 504, 'gateway_timeout', 'The server took too long to respond.'));
    return;
  }
  sendJson(ex.res, 200, { data: publicRecord(ex, record, true) });
}

function wouldBe(action: LedgerlyAction, reason: string | undefined): Record<string, unknown> {
  switch (action) {
    case 'edit':
      return { resolution_reason: reason ?? null };
    case 'resolve':
      return { state: 'under_review' };
    case 'reopen':
      return { state: 'open' };
    case 'refund':
      return { state: 'refund_pending' };
  }
}

/* ---------- dispatch ---------- */

const RECORD_WRITES: Record<string, { method: string; action: LedgerlyAction }> = {
  '': { method: 'PATCH', action: 'edit' },
  '/resolve': { method: 'POST', action: 'resolve' },
  '/reopen': { method: 'POST', action: 'reopen' },
  '/refund': { method: 'POST', action: 'refund' },
};

export async function handleApi(ex: LedgerlyExchange): Promise<void> {
  const method = ex.req.method ?? 'GET';
  const path = ex.url.pathname;
  const route = `${method} ${path}`;
  if (route === 'POST /api/session') return postSession(ex);
  if (route === 'DELETE /api/session') return deleteSession(ex);
  if (route === 'GET /api/me') {
    const signed = requireSession(ex);
    if (signed) sendJson(ex.res, 200, meOf(ex, signed));
    return;
  }
  if (route === 'PUT /api/me/organization') return putOrganization(ex);
  if (route === 'GET /api/discrepancies') return getList(ex);
  if (route === 'GET /api/exports/discrepancies.csv') return getExport(ex);
  const match = /^\/api\/discrepancies\/([^/]+)(\/[a-z]+)?$/.exec(path);
  if (match?.[1] && DISCREPANCY_ID_PATTERN.test(match[1])) {
    const id = match[1];
    const sub = match[2] ?? '';
    if (sub === '' && method === 'GET') return getOne(ex, id);
    const writeRoute = RECORD_WRITES[sub];
    if (writeRoute && writeRoute.method === method) return write(ex, id, writeRoute.action);
    if (writeRoute) return sendError(ex, 405, 'method_not_allowed', `${method} is not allowed on ${path}`);
  }
  sendError(ex, 404, 'not_found', `No API endpoint ${route}.`);
}
