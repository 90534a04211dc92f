import { totpCode } from '../../../src/browser/second-factor.js';
import { SettloControl } from '../../../backoffices/settlo/control-client.js';
import { settloUserFor, startSettlo, TOTP_PERIOD_SECONDS, type SettloOptions } from '../../../backoffices/settlo/server.js';
import { CONTROL_TOKEN } from '../../support/browser-back-office.js';

export interface TestSettlo {
  url: string;
  ctl: SettloControl;
  close(): Promise<void>;
}

export async function startTestSettlo(options: SettloOptions = {}): Promise<TestSettlo> {
  const settlo = await startSettlo({ controlToken: CONTROL_TOKEN, asyncDelayMs: 150, ...options });
  return { url: settlo.url, ctl: new SettloControl(settlo.url, CONTROL_TOKEN), close: () => settlo.close() };
}

/** The current TOTP code of a tenant's user, as an authenticator app shows it. */
export function codeFor(tenant: string, at = Date.now()): string {
  return totpCode(settloUserFor(tenant).totpSecret, { period: TOTP_PERIOD_SECONDS, digits: 6, algorithm: 'SHA1' }, at);
}

function cookieOf(response: Response, name: string): string {
  const found = response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!found) throw new Error(`no ${name} cookie in the answer (status ${response.status})`);
  return found.split(';')[0] ?? '';
}

const form = (values: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(values).toString(),
  redirect: 'manual' as const,
});

/** Signs a tenant's user in without a browser (password, then code); returns the session cookie header. */
export async function signInByHttp(url: string, tenant: string, code = codeFor(tenant)): Promise<string> {
  const user = settloUserFor(tenant);
  const first = await fetch(`${url}/login`, form({ username: user.username, password: user.password }));
  if (first.status !== 302 || first.headers.get('location') !== '/login/totp') throw new Error(`password step answered ${first.status}`);
  const pending = cookieOf(first, 'mfa');
  const second = await fetch(`${url}/login/totp`, { ...form({ code }), headers: { ...form({}).headers, cookie: pending } });
  if (second.status !== 302) throw new Error(`code step answered ${second.status}`);
  return cookieOf(second, 'JSESSIONID');
}

export async function api(url: string, cookie: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: 'manual',
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = {};
  }
  return { status: response.status, json, headers: response.headers };
}
