import type { BaseExchange } from '../../kit/serve.js';
import type { Identity, SimAccount } from '../accounts.js';
import type { BackOffice } from '../back-office.js';
import type { FaultContext } from '../../kit/faults.js';
import { parseCookies } from '../../../src/http/cookies.js';
import type { Viewer } from '../pages/layout.js';
import type { Session } from '../../kit/sessions.js';

/** One request/response pair and what the routes need around it. */
export interface Exchange extends BaseExchange {
  office: BackOffice;
}

export const SESSION_COOKIE = 'sid';

export function sidOf(ex: Exchange): string | undefined {
  return parseCookies(ex.req.headers.cookie).get(SESSION_COOKIE);
}

export function bearerToken(ex: Exchange): string | undefined {
  const header = ex.req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function viewerOf(ex: Exchange, session: Session): Viewer {
  return { username: session.username, csrf: session.csrf, clientTimeoutMs: ex.office.clientTimeoutMs };
}

/** A live, not revoked session with the account behind it. */
export interface Authenticated {
  session: Session;
  account: SimAccount;
  identity: Identity;
}

export type SessionCheck =
  | { kind: 'none' }
  | { kind: 'expired' }
  | { kind: 'revoked'; auth: Authenticated }
  | { kind: 'ok'; auth: Authenticated };

/**
 * Resolves the sid cookie. A session_revoked fault that matches the request
 * revokes the session on the spot (and it stays revoked); accounts that no
 * longer exist after a reset count as expired.
 */
export function checkSession(ex: Exchange, context: Omit<FaultContext, 'identity'>): SessionCheck {
  const lookup = ex.office.sessions.lookup(sidOf(ex));
  if (lookup.kind !== 'live') return lookup;
  const { session } = lookup;
  const account = ex.office.accountByUsername(session.username);
  if (!account) return { kind: 'expired' };
  ex.identity = session.username;
  ex.sessionId = session.sid;
  const auth: Authenticated = { session, account, identity: ex.office.identityFor(account) };
  if (!session.revoked && ex.office.faults.fire('session_revoked', { ...context, identity: session.username })) {
    session.revoked = true;
  }
  return session.revoked ? { kind: 'revoked', auth } : { kind: 'ok', auth };
}

/** The bill-number prefix names the tenant (ACME-202611-0001 belongs to acme). */
export function tenantOfBillNo(billNo: string): string {
  return billNo.slice(0, billNo.indexOf('-')).toLowerCase();
}

/** What a request is about, read from the URL alone, for faults that act before routing (slow_ms). */
export function peekContext(ex: Exchange): FaultContext {
  const context: FaultContext = {};
  const tenant = ex.url.searchParams.get('tenant');
  if (tenant) context.tenant = tenant;
  const billMatch = /^\/(?:diff|api\/v1\/bills)\/([A-Z]+-\d{6}-\d{4})(?:\/|$)/.exec(ex.url.pathname);
  if (billMatch?.[1]) {
    context.bill = billMatch[1];
    context.tenant = ex.office.ledger.get(billMatch[1])?.tenant ?? tenantOfBillNo(billMatch[1]);
  }
  const token = bearerToken(ex);
  const session = token ? undefined : ex.office.sessions.peek(sidOf(ex));
  const username = token ? ex.office.accountByToken(token)?.username : session?.username;
  if (session) ex.sessionId = session.sid;
  if (username) {
    context.identity = username;
    ex.identity = username;
  }
  return context;
}
