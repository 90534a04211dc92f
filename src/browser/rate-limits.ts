import type { BrowserContext, Response } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReadFailedError } from '../domain/errors.js';
import { DEFAULT_RETRY_AFTER_MS, describeRateLimit, rateLimitCounts, retryAfterMs, waitOutRateLimits } from '../lib/retry-after.js';
import { deadline } from '../lib/deadline.js';

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
  );
}

/** A 429 the vendor sent to one of the app's own requests, as the page's context saw it. */
export interface SeenRateLimit {
  request: string;
  retryAfterMs: number | undefined;
}

/**
 * Watches the requests that a write's commit clicks send (every request that is not a GET or HEAD, from any page or
 * frame of the context), from the first commit click on. `refusal()` says whether the vendor refused them with 429
 * and accepted none: then nothing was committed (the vendor turned the request away before acting on it), so the
 * write is "not committed", never "may have landed". One accepted request (an earlier stage's write) means
 * something landed, and the 429 proves nothing.
 */
export function watchCommitRequests(context: BrowserContext, origin: string): { refusal(): SeenRateLimit | undefined; stop(): void } {
  let refused: SeenRateLimit | undefined;
  let accepted = false;
  const onResponse = (response: Response) => {
    const request = response.request();
    if (request.method() === 'GET' || request.method() === 'HEAD') return;
    let url: URL;
    try {
      url = new URL(response.url());
    } catch {
      return;
    }
    if (url.origin !== origin) return;
    if (response.status() === 429) {
      rateLimitCounts.seen += 1;
      refused ??= { request: `${request.method()} ${url.pathname}`, retryAfterMs: retryAfterMs(response.headers()['retry-after']) };
    } else if (response.status() < 400) accepted = true;
  };
  context.on('response', onResponse);
  return {
    refusal: () => (accepted ? undefined : refused),
    stop: () => context.off('response', onResponse),
  };
}

export async function sleepOut(wait: number | undefined, capMs: number): Promise<void> {
  const ms = Math.min(wait ?? DEFAULT_RETRY_AFTER_MS, capMs);
  await sleep(ms);
  rateLimitCounts.waitedOut += 1;
  rateLimitCounts.waitedMs += ms;
}

export { describeRateLimit };
