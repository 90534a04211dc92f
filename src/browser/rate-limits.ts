import type { APIResponse, BrowserContext, Response } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReadFailedError } from '../domain/errors.js';
import {
  DEFAULT_RETRY_AFTER_MS,
  currentRateLimitTally,
  describeRateLimit,
  noteRateLimitWait,
  waitOutRateLimits,
} from '../lib/retry-after.js';
import { deadline } from '../lib/deadline.js';

/*
 * 429s met by the browser layer's own requests: a page navigation, a GET made with a session's cookie, a wait
 * sat out. The pace that keeps an identity under the limit is request-pace.ts; a commit click's refused request
 * is commit-requests.ts.
 */

/**
 * A page navigation answered 429 is waited out (Retry-After, else a second) and made again, as long as the wait
 * fits in the step's time; otherwise the step fails naming the rate limit, never "found nothing".
 */
export async function waitOutPageRateLimit(
  response: Response | null,
  again: () => Promise<Response | null>,
  what: string,
  timeoutMs: number,
): Promise<Response | null> {
  return waitOutRateLimits(
    response,
    { status: (r) => r?.status(), retryAfter: (r) => r?.headers()['retry-after'] },
    again,
    deadline(timeoutMs),
    (wait) =>
      new ReadFailedError(`${describeRateLimit(`GET ${what}`, wait)}; the wait does not fit in the step's ${timeoutMs} ms`, {
        status: 429,
        retryAfterMs: wait,
      }),
    // A session that watches its pages' responses (a paced pack: request-pace.ts) has counted the 429 already.
    currentRateLimitTally()?.pagesWatched ?? false,
  );
}

export async function sleepOut(wait: number | undefined, capMs: number): Promise<void> {
  const ms = Math.min(wait ?? DEFAULT_RETRY_AFTER_MS, capMs);
  await sleep(ms);
  noteRateLimitWait(ms);
}

export { describeRateLimit };

/**
 * A GET made with a session's cookie outside its pages (the pack's cookie API, an export URL): kept to the
 * identity's pace, and a 429 waited out as its Retry-After asks within `timeoutMs`, then made again; a wait that
 * does not fit fails naming the rate limit. These requests are not the pages' (no page response event sees them),
 * so their 429s are counted here.
 */
export async function sessionGet(
  session: { context: BrowserContext; paceRequest?(url: URL): Promise<void> },
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<APIResponse> {
  const get = async () => {
    await session.paceRequest?.(url);
    return session.context.request.get(url.toString(), { failOnStatusCode: false, maxRedirects: 0, headers }).catch((error: Error) => {
      throw new ReadFailedError(`reading ${url.pathname} failed: ${error.message}`, {}, { cause: error });
    });
  };
  return waitOutRateLimits(
    await get(),
    { status: (r) => r.status(), retryAfter: (r) => r.headers()['retry-after'] },
    get,
    deadline(timeoutMs),
    (wait) =>
      new ReadFailedError(`${describeRateLimit(`GET ${url.pathname}`, wait)}; the wait does not fit in the read's ${timeoutMs} ms`, {
        status: 429,
        retryAfterMs: wait,
      }),
  );
}
