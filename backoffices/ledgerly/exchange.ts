import type { BaseExchange } from '../kit/serve.js';
import { parseCookies } from '../../src/http/cookies.js';
import { sendJson } from '../kit/http-util.js';
import type { FaultContext } from '../kit/faults.js';
import type { Session } from '../kit/sessions.js';
import type { LedgerlyUser } from './accounts.js';
import type { LedgerlyOffice } from './office.js';
import { DISCREPANCY_ID_PATTERN } from './schemas.js';

/** One request/response pair for Ledgerly's routes. */
export interface LedgerlyExchange extends BaseExchange {
  office: LedgerlyOffice;
}

export const SESSION_COOKIE = 'ledgerly_session';

/** Ledgerly's error shape: `{ error: { code, message } }`. */
export function sendError(ex: LedgerlyExchange, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(ex.res, status, { error: { code, message } }, headers);
}

export function sidOf(ex: LedgerlyExchange): string | undefined {
  return parseCookies(ex.req.headers.cookie).get(SESSION_COOKIE);
}

/** A signed-in request: the session, its user and the org it is working in. */
export interface Signed {
  session: Session;
  user: LedgerlyUser;
  org: string;
}

/**
 * Resolves the session cookie, or answers 401 JSON and returns undefined. A
 * matching session_revoked fault revokes the session for good.
 */
export function requireSession(ex: LedgerlyExchange, bill?: string): Signed | undefined {
  const lookup = ex.office.sessions.lookup(sidOf(ex));
  if (lookup.kind === 'none') {
    sendError(ex, 401, 'unauthenticated', 'Sign in to continue.');
    return undefined;
  }
  const user = lookup.kind === 'live' ? ex.office.userByUsername(lookup.session.username) : undefined;
  const org = lookup.kind === 'live' ? ex.office.sessionOrg.get(lookup.session.sid) : undefined;
  if (lookup.kind === 'expired' || !user || !org) {
    sendError(ex, 401, 'session_expired', 'Your session has expired. Sign in again.');
    return undefined;
  }
  const { session } = lookup;
  ex.identity = session.username;
  const tenant = bill ? (ex.office.book.get(bill)?.org ?? org) : org;
  if (!session.revoked && ex.office.faults.fire('session_revoked', { identity: session.username, tenant, ...(bill ? { bill } : {}) })) {
    session.revoked = true;
  }
  if (session.revoked) {
    sendError(ex, 401, 'session_revoked', 'Your session was ended by an administrator. Sign in again.');
    return undefined;
  }
  return { session, user, org };
}

/** What a request is about from its URL and cookie alone, for faults that act before routing. */
export function peekContext(ex: LedgerlyExchange): FaultContext {
  const context: FaultContext = {};
  const session = ex.office.sessions.peek(sidOf(ex));
  if (session) {
    context.identity = session.username;
    ex.identity = session.username;
    const org = ex.office.sessionOrg.get(session.sid);
    if (org) context.tenant = org;
  }
  const match = /^\/api\/discrepancies\/([^/]+)/.exec(ex.url.pathname);
  if (match?.[1] && DISCREPANCY_ID_PATTERN.test(match[1])) {
    context.bill = match[1];
    const record = ex.office.book.get(match[1]);
    if (record) context.tenant = record.org;
  }
  return context;
}
