/**
 * HTTP 429 and its Retry-After header (RFC 9110 §10.2.3): the vendor asks the caller to slow down and says when
 * to come back, in seconds or as an HTTP date. Shared by the browser (pages, the app's own calls, commit clicks)
 * and the vendor API client.
 */
import type { Deadline } from './deadline.js';

/** How long a 429 without a usable Retry-After is waited out. */
export const DEFAULT_RETRY_AFTER_MS = 1000;

/** The wait a Retry-After value asks for, in ms; undefined when there is none or it cannot be read. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The words every message about a 429 uses, so an operator can search for them: "rate limited (429 ...)". */
export function describeRateLimit(request: string, waitMs: number | undefined): string {
  const after = waitMs === undefined ? 'no Retry-After' : `Retry-After ${Math.ceil(waitMs / 1000)} s`;
  return `rate limited: the vendor answered 429 Too Many Requests (${after}) to ${request}`;
}

/** Counts of 429s met in this process, for the run's report. */
export const rateLimitCounts = { seen: 0, waitedOut: 0, waitedMs: 0 };

/** Whether waiting `waitMs` still leaves time in the operation's budget. */
export function fitsIn(limit: Deadline, waitMs: number): boolean {
  return waitMs < limit.remaining();
}

/**
 * Makes a request again while the vendor answers 429, each time waiting what its Retry-After asks (else a second),
 * all within the one budget of the operation. A wait that does not fit ends it with `tooLong`'s error, which names
 * the rate limit: never "found nothing" or a bare timeout.
 */
export async function waitOutRateLimits<Answer>(
  first: Answer,
  read: { status(answer: Answer): number | undefined; retryAfter(answer: Answer): string | null | undefined },
  again: () => Promise<Answer>,
  limit: Deadline,
  tooLong: (waitMs: number) => Error,
): Promise<Answer> {
  let answer = first;
  while (read.status(answer) === 429) {
    rateLimitCounts.seen += 1;
    const wait = retryAfterMs(read.retryAfter(answer)) ?? DEFAULT_RETRY_AFTER_MS;
    if (!fitsIn(limit, wait)) throw tooLong(wait);
    await limit.sleep(wait);
    rateLimitCounts.waitedOut += 1;
    rateLimitCounts.waitedMs += wait;
    answer = await again();
  }
  return answer;
}
