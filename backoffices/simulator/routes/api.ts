import { z } from 'zod';
import { canSee, type Identity } from '../accounts.js';
import { sendJson } from '../../kit/http-util.js';
import { BILL_NO_PATTERN, describeIssues, type Bill } from '../schemas.js';
import { bearerToken, type Exchange } from './exchange.js';
import { hangAfterCommit } from '../../kit/http-util.js';

/**
 * The vendor's JSON API (v1): reads, and notes with Idempotency-Key
 * semantics. Errors are { error, message } with the field named in message.
 */

function fail(ex: Exchange, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(ex.res, status, { error, message }, headers);
}

function authenticate(ex: Exchange): Identity | undefined {
  const token = bearerToken(ex);
  const account = token === undefined ? undefined : ex.office.accountByToken(token);
  if (!account) {
    fail(ex, 401, 'unauthorized', 'Authorization: Bearer <token> header missing or invalid', { 'www-authenticate': 'Bearer' });
    return undefined;
  }
  ex.identity = account.username;
  return ex.office.identityFor(account);
}

function publicBill(bill: Bill) {
  return {
    billNo: bill.billNo,
    tenant: bill.tenant,
    kind: bill.kind,
    amountCents: bill.amountCents,
    status: bill.status,
    updatedAt: bill.updatedAt,
    notes: structuredClone(bill.notes),
  };
}

/** Resolves a bill path segment: 404 for a malformed or unknown number, 403 outside the scope. */
function scopedBill(ex: Exchange, identity: Identity, billNo: string): Bill | undefined {
  if (!BILL_NO_PATTERN.test(billNo)) {
    fail(ex, 404, 'not_found', 'bill not found (bill numbers look like ACME-202611-0001)');
    return undefined;
  }
  const bill = ex.office.ledger.get(billNo);
  if (!bill) {
    fail(ex, 404, 'not_found', `bill ${billNo} not found`);
    return undefined;
  }
  if (!canSee(identity, bill.tenant)) {
    fail(ex, 403, 'forbidden', `identity may not access tenant ${bill.tenant}`);
    return undefined;
  }
  return bill;
}

const NoteBodySchema = z.strictObject({
  text: z.string({ error: 'text must be a string' }).min(1, 'text must not be empty').max(500, 'text must be at most 500 characters'),
});

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

export async function handleApi(ex: Exchange): Promise<void> {
  const { pathname } = ex.url;
  const method = ex.req.method ?? 'GET';
  const billRoute = /^\/api\/v1\/bills\/([^/]+)(\/notes)?$/.exec(pathname);
  const known = pathname === '/api/v1/bills' || billRoute !== null;
  if (!known) return fail(ex, 404, 'not_found', `no such endpoint: ${method} ${pathname}`);
  const identity = authenticate(ex);
  if (!identity) return;

  if (pathname === '/api/v1/bills') {
    if (method !== 'GET') return fail(ex, 405, 'method_not_allowed', 'use GET', { allow: 'GET' });
    const tenant = ex.url.searchParams.get('tenant');
    if (!tenant) return fail(ex, 400, 'invalid_request', 'tenant: required query parameter, e.g. ?tenant=acme');
    if (!canSee(identity, tenant)) return fail(ex, 403, 'forbidden', `identity may not access tenant ${tenant}`);
    sendJson(ex.res, 200, { bills: ex.office.ledger.forTenant(tenant).map(publicBill) });
    return;
  }

  const billNo = billRoute?.[1] ?? '';
  if (!billRoute?.[2]) {
    if (method !== 'GET') return fail(ex, 405, 'method_not_allowed', 'use GET', { allow: 'GET' });
    const bill = scopedBill(ex, identity, billNo);
    if (bill) sendJson(ex.res, 200, { ...publicBill(bill), records: structuredClone(bill.records) });
    return;
  }

  if (method !== 'POST') return fail(ex, 405, 'method_not_allowed', 'use POST', { allow: 'POST' });
  await postNote(ex, identity, billNo);
}

async function postNote(ex: Exchange, identity: Identity, billNo: string): Promise<void> {
  const raw = ex.body;
  const bill = scopedBill(ex, identity, billNo);
  if (!bill) return;
  const key = ex.req.headers['idempotency-key'];
  if (typeof key !== 'string' || key === '') {
    return fail(ex, 400, 'invalid_request', 'Idempotency-Key: required header (any unique string up to 200 printable ASCII characters)');
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return fail(ex, 400, 'invalid_request', 'Idempotency-Key: 1-200 printable ASCII characters, no spaces');
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return fail(ex, 400, 'invalid_request', 'body: not valid JSON; send {"text": "..."} with Content-Type: application/json');
  }
  const body = NoteBodySchema.safeParse(json);
  if (!body.success) return fail(ex, 400, 'invalid_request', describeIssues(body.error, 'body'));

  const context = { identity: identity.username, tenant: bill.tenant, bill: billNo };
  const { office } = ex;
  if (office.faults.fire('permission_denied', context)) return fail(ex, 403, 'permission_denied', 'identity is not allowed to write');
  if (office.faults.fire('error_500', context)) return fail(ex, 500, 'internal_error', 'internal error, nothing was recorded');

  const outcome = office.ledger.addNote(billNo, { identity: identity.username, sessionId: 'api', via: 'api' }, body.data.text, key);
  if ('conflict' in outcome) {
    return fail(ex, 422, 'idempotency_key_reused', 'Idempotency-Key: already used with a different request body or bill');
  }
  if (outcome.replayed) {
    sendJson(ex.res, 200, outcome.receipt, { 'idempotent-replayed': 'true' });
    return;
  }
  const hang = office.faults.fire('commit_then_timeout', context);
  if (hang) {
    // The note is stored; the answer is lost, as when a gateway in front times out.
    await hangAfterCommit(ex, hang.ms, () => fail(ex, 504, 'gateway_timeout', 'upstream timed out'));
    return;
  }
  sendJson(ex.res, 201, outcome.receipt);
}
