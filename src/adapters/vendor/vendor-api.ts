import { fillTemplate } from '../../sitepack/action-language.js';
import type { SiteAction, SitePack } from '../../sitepack/schema.js';
import { ReadFailedError, SessionLostError, WriteNotCommittedError, AmbiguousOutcomeError } from '../../domain/errors.js';

/**
 * The vendor's JSON API, where the site pack declares one: the `api` tier of
 * the tool ladder for writes, and an independent readback source.
 */
export class VendorApi {
  constructor(
    private readonly baseUrl: string,
    private readonly pack: SitePack,
    private readonly token: string,
    private readonly timeoutMs = 10_000,
  ) {}

  /** Reads one item; undefined when the vendor says it does not exist or is not ours. */
  async readItem(billNo: string): Promise<Record<string, unknown> | undefined> {
    if (!this.pack.api) throw new ReadFailedError(`site pack ${this.pack.site} declares no api`);
    const url = new URL(fillTemplate(this.pack.api.itemUrl, { billNo }, 'url'), this.baseUrl);
    const response = await this.fetch(url, { method: 'GET' }).catch((error: Error) => {
      throw new ReadFailedError(`reading ${url.pathname} failed: ${error.message}`);
    });
    if (response.status === 401) throw new SessionLostError('the vendor API rejected the identity token (401)');
    if (this.pack.api.notFoundStatus.includes(response.status)) return undefined;
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
      throw new AmbiguousOutcomeError(`the vendor API did not answer ${request.method} ${url.pathname}: ${(error as Error).message}`);
    }
    const text = await response.text();
    if (response.status === 401) throw new SessionLostError('the vendor API rejected the identity token (401)');
    if (response.status >= 500) throw new AmbiguousOutcomeError(`the vendor API answered ${response.status}`);
    if (!response.ok) throw new WriteNotCommittedError(`the vendor API refused the write (${response.status}): ${text.slice(0, 200)}`);
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  private fetch(url: URL, init: RequestInit): Promise<Response> {
    return fetch(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.token}` },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }
}
