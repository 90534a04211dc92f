import type { BaseExchange } from '../kit/serve.js';
import type { FaultContext } from '../kit/faults.js';
import { redirect, sendJson } from '../kit/http-util.js';
import type { Session } from '../kit/sessions.js';
import { parseCookies } from '../../src/http/cookies.js';
import type { SettloUser } from './accounts.js';
import type { SettloOffice } from './office.js';
import { BILL_NO_PATTERN } from './schemas.js';

/** One request/response pair for Settlo's routes. */
export interface SettloExchange extends BaseExchange {
  office: SettloOffice;
}

/** A servlet container's session cookie: the portal is that old. */
export const SESSION_COOKIE = 'JSESSIONID';
export const SESSION_EXPIRED_TEXT = '会话已过期，请重新登录';

export function sidOf(ex: SettloExchange): string | undefined {
  return parseCookies(ex.req.headers.cookie).get(SESSION_COOKIE);
}

export interface Signed {
  session: Session;
  user: SettloUser;
}

export function apiError(ex: SettloExchange, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(ex.res, status, { error, message }, headers);
}

/**
 * The signed-in user, or undefined after answering: pages go to the login page (`?expired=1` when a session
 * was there), JSON calls get a 401. A matching session_revoked fault ends the session for good.
 */
export function requireSession(ex: SettloExchange, kind: 'page' | 'api', bill?: string): Signed | undefined {
  const lookup = ex.office.sessions.lookup(sidOf(ex));
  const user = lookup.kind === 'live' ? ex.office.userByUsername(lookup.session.username) : undefined;
  const refuse = (expired: boolean) => {
    if (kind === 'api') apiError(ex, 401, expired ? 'session_expired' : 'unauthenticated', expired ? SESSION_EXPIRED_TEXT : '请先登录');
    else redirect(ex.res, expired ? '/login?expired=1' : '/login');
    return undefined;
  };
  if (lookup.kind === 'none') return refuse(false);
  if (lookup.kind === 'expired' || !user) return refuse(true);
  const { session } = lookup;
  ex.identity = session.username;
  const tenant = bill ? (ex.office.book.get(bill)?.tenant ?? user.tenant) : user.tenant;
  if (!session.revoked && ex.office.faults.fire('session_revoked', { identity: user.username, tenant, ...(bill ? { bill } : {}) })) {
    session.revoked = true;
  }
  if (session.revoked) return refuse(true);
  return { session, user };
}

const BILL_IN_PATH = /\/bills\/(JS-\d{5})(?:\/|$)/;

/** What a request is about from its URL and cookie alone, for the faults that act before routing. */
export function peekContext(ex: SettloExchange): FaultContext {
  const context: FaultContext = {};
  const session = ex.office.sessions.peek(sidOf(ex));
  const user = session && ex.office.userByUsername(session.username);
  if (session && user) {
    context.identity = user.username;
    context.tenant = user.tenant;
    ex.identity = user.username;
  }
  const match = BILL_IN_PATH.exec(ex.url.pathname);
  if (match?.[1] && BILL_NO_PATTERN.test(match[1])) {
    context.bill = match[1];
    const bill = ex.office.book.get(match[1]);
    if (bill) context.tenant = bill.tenant;
  }
  return context;
}
