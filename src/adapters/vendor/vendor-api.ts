import { fillTemplate } from '../../sitepack/action-language.js';
import type { SiteAction, SitePack } from '../../sitepack/schema.js';
import type { VendorApiPort } from '../../app/ports/vendor-api.js';
import { ReadFailedError, SessionLostError, WriteNotCommittedError, AmbiguousOutcomeError } from '../../domain/errors.js';
import { currentRateLimitTally, describeRateLimit, noteRateLimited, retryAfterMs, waitOutRateLimits } from '../../lib/retry-after.js';
import { deadline } from '../../lib/deadline.js';
import { pacedPath, type RequestPace } from '../../lib/request-pace.js';

/** How requests to the vendor's JSON API are authenticated. */
export type VendorApiAuth =
  /** The identity's API token, as `Authorization: Bearer`. */
  | { kind: 'token'; token: string }
  /** The session cookie the pack's `api.login` request gets with the identity's credentials. */
  | { kind: 'login'; username: string; password: string };

/**
 * The vendor's JSON API, where the site pack declares one: the `api` tier of
 * the tool ladder for writes, and an independent readback source. A cookie
 * API with an `api.login` is reached the same way, without a browser: one
 * login per client, then its cookies on every call.
 */
export class VendorApi implements VendorApiPort {
  private cookie: Promise<string> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly pack: SitePack,
    private readonly auth: VendorApiAuth,
    private readonly timeoutMs = 10_000,
    /** The identity's request pace (the pack's `pace`), shared with its browser sessions; absent: none. */
    private readonly pace?: RequestPace,
  ) {}

  /** Reads one item; undefined when the vendor says it does not exist or is not ours. */
  async readItem(billNo: string): Promise<Record<string, unknown> | undefined> {
    if (!this.pack.api) throw new ReadFailedError(`site pack ${this.pack.site} declares no api`);
    const url = new URL(fillTemplate(this.pack.api.itemUrl, { billNo }, 'url'), this.baseUrl);
    const read = () =>
      this.fetch(url, { method: 'GET' }).catch((error: Error) => {
        throw new ReadFailedError(`reading ${url.pathname} failed: ${error.message}`, {}, { cause: error });
      });
    // A read the vendor rate-limits (429) is waited out as its Retry-After asks, within the call's time, then made again.
    const response = await waitOutRateLimits(
      await read(),
      { status: (r) => r.status, retryAfter: (r) => r.headers.get('retry-after') },
      read,
      deadline(this.timeoutMs),
      (wait) =>
        new ReadFailedError(`${describeRateLimit(`GET ${url.pathname}`, wait)}; the wait does not fit in the read's ${this.timeoutMs} ms`, {
          status: 429,
          retryAfterMs: wait,
        }),
    );
    if (this.pack.api.notFoundStatus.includes(response.status)) return undefined;
    this.assertAuthenticated(response);
    if (!response.ok) throw new ReadFailedError(`reading ${url.pathname} answered ${response.status}`);
    let item: unknown = await response.json();
    // The item inside the answer, at the pack's dot path ('' for the answer itself).
    for (const part of this.pack.api.itemPath.split('.').filter(Boolean)) {
      item = item !== null && typeof item === 'object' && Object.hasOwn(item, part) ? (item as Record<string, unknown>)[part] : undefined;
    }
    return item !== null && typeof item === 'object' ? (item as Record<string, unknown>) : undefined;
  }

  /** Performs an action's api tier once, carrying the idempotency key when the vendor honours one. */
  async write(action: SiteAction, params: Record<string, string>, idempotencyKey: string): Promise<{ status: number; body: unknown }> {
    const request = action.tiers.api;
    if (!request) throw new WriteNotCommittedError('this action has no api tier');
    const url = new URL(fillTemplate(request.path, params, 'url'), this.baseUrl);
    const body = Object.fromEntries(Object.entries(request.body).map(([k, v]) => [k, fillTemplate(v, params)]));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (request.idempotencyHeader) headers[request.idempotencyHeader] = idempotencyKey;
    let response: Response;
    try {
      response = await this.fetch(url, { method: request.method, headers, body: JSON.stringify(body) });
    } catch (error) {
      throw new AmbiguousOutcomeError(
        `the vendor API did not answer ${request.method} ${url.pathname}: ${(error as Error).message}`,
        {},
        { cause: error },
      );
    }
    const text = await response.text();
    this.assertAuthenticated(response);
    if (response.status >= 500) throw new AmbiguousOutcomeError(`the vendor API answered ${response.status}`);
    if (response.status === 429) {
      noteRateLimited();
      // Turned away before it was acted on: not committed, and safe to send again once the wait is over.
      const wait = retryAfterMs(response.headers.get('retry-after'));
      throw new WriteNotCommittedError(`${describeRateLimit(`${request.method} ${url.pathname}`, wait)}: not committed`, { status: 429 });
    }
    if (!response.ok) throw new WriteNotCommittedError(`the vendor API refused the write (${response.status}): ${text.slice(0, 200)}`);
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  /** A 401 (a cookie API: also 403 or a redirect to its login) means the identity's session or token is gone. */
  private assertAuthenticated(response: Response): void {
    const what = this.auth.kind === 'token' ? 'the identity token' : 'the session cookie from api.login';
    const lost =
      response.status === 401 ||
      (this.auth.kind === 'login' && (response.status === 403 || (response.status >= 300 && response.status < 400)));
    if (lost) throw new SessionLostError(`the vendor API answered ${response.status} to ${what}: the session is gone`);
  }

  private async fetch(url: URL, init: RequestInit): Promise<Response> {
    if (this.pace && pacedPath(url, this.pack.pace?.paths)) {
      const waited = await this.pace.take();
      if (waited > 0) currentRateLimitTally()?.add('pacedMs', waited);
    }
    const auth: Record<string, string> =
      this.auth.kind === 'token' ? { authorization: `Bearer ${this.auth.token}` } : { cookie: await this.sessionCookie() };
    return fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { accept: 'application/json', ...(init.headers as Record<string, string>), ...auth },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }

  /** Signs in once with the pack's api.login request; the cookies it sets authenticate every later call. */
  private sessionCookie(): Promise<string> {
    this.cookie ??= this.login().catch((error: unknown) => {
      this.cookie = undefined;
      throw error;
    });
    return this.cookie;
  }

  private async login(): Promise<string> {
    const spec = this.pack.api?.login;
    if (!spec || this.auth.kind !== 'login') throw new ReadFailedError(`site pack ${this.pack.site} declares no api.login`);
    const credentials = { username: this.auth.username, password: this.auth.password };
    const fields = Object.fromEntries(Object.entries(spec.body).map(([k, v]) => [k, fillTemplate(v, credentials)]));
    const url = new URL(fillTemplate(spec.url, {}, 'url'), this.baseUrl);
    const body = spec.format === 'json' ? JSON.stringify(fields) : new URLSearchParams(fields).toString();
    const contentType = spec.format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
    // Credentials travel only in the body, never in a URL; a failure names the request, never the password.
    const response = await fetch(url, {
      method: spec.method,
      redirect: 'manual',
      headers: { 'content-type': contentType, accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(this.timeoutMs),
    }).catch((error: Error) => {
      throw new ReadFailedError(`api.login ${spec.method} ${url.pathname} failed: ${error.message}`);
    });
    await response.arrayBuffer().catch(() => undefined);
    const cookies = response.headers
      .getSetCookie()
      .map((line) => line.split(';', 1)[0]!.trim())
      .filter((pair) => pair.includes('='));
    if (response.status >= 400 || cookies.length === 0) {
      throw new SessionLostError(
        `api.login ${spec.method} ${url.pathname} as ${this.auth.username} answered ${response.status}${
          cookies.length === 0 ? ' and set no cookie' : ''
        }: check the identity's credentials and api.login.body`,
      );
    }
    return cookies.join('; ');
  }
}
