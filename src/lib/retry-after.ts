/**
 * HTTP 429 and its Retry-After header (RFC 9110 §10.2.3): the vendor asks the caller to slow down and says when
 * to come back, in seconds or as an HTTP date. Shared by the browser (pages, the app's own calls, commit clicks)
 * and the vendor API client.
 */

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

/** Whether waiting `waitMs` still fits before `deadline` (ms since the epoch). */
export function fitsBefore(deadline: number, waitMs: number, now = Date.now()): boolean {
  return now + waitMs < deadline;
}
