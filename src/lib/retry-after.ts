/**
 * HTTP 429 and its Retry-After header (RFC 9110 §10.2.3): the vendor asks the caller to slow down and says when
 * to come back, in seconds or as an HTTP date. Shared by the browser (pages, the app's own calls, commit clicks)
 * and the vendor API client.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
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

/**
 * The 429s one unit of work (a workflow step) met, whatever part of it met them, and the time it spent on them:
 * sitting out Retry-After (`waitedMs`) and waiting for the identity's request pace (`pacedMs`). A tally made inside
 * another (`withRateLimitTally` nested) adds to both.
 */
export class RateLimitTally {
  seen = 0;
  waitedMs = 0;
  pacedMs = 0;
  /**
   * Set by a browser session that watches every response its pages get (a pack with a pace): those 429s are counted
   * there, so the navigation and commit-click waiters must not count them again.
   */
  pagesWatched = false;

  constructor(private readonly parent?: RateLimitTally) {}

  add(what: 'seen' | 'waitedMs' | 'pacedMs', n: number): void {
    this[what] += n;
    this.parent?.add(what, n);
  }
}

const tallies = new AsyncLocalStorage<RateLimitTally>();

/**
 * Runs `work` with a tally of its own: every 429 met inside it (`noteRateLimited`, also from a browser session
 * opened inside it) is counted there as well as in the process's counts (and in the tally of the work it runs
 * inside), so concurrent steps in one process each know their own.
 */
export async function withRateLimitTally<T>(
  work: () => Promise<T>,
): Promise<{ result: T; tally: RateLimitTally } | { error: unknown; tally: RateLimitTally }> {
  const tally = new RateLimitTally(tallies.getStore());
  return tallies.run(tally, async () => {
    try {
      return { result: await work(), tally };
    } catch (error) {
      return { error, tally };
    }
  });
}

/** The tally of the work running now, if any (a browser session captures it when opened: its events run outside). */
export function currentRateLimitTally(): RateLimitTally | undefined {
  return tallies.getStore();
}

/** Counts one 429 (or `n`) in the process's counts and in the running work's tally, or in `tally` when given. */
export function noteRateLimited(n = 1, tally: RateLimitTally | undefined = tallies.getStore()): void {
  rateLimitCounts.seen += n;
  tally?.add('seen', n);
}

/** Counts a Retry-After wait sat out, in the process's counts and the running work's tally (or `tally`). */
export function noteRateLimitWait(ms: number, tally: RateLimitTally | undefined = tallies.getStore()): void {
  rateLimitCounts.waitedOut += 1;
  rateLimitCounts.waitedMs += ms;
  tally?.add('waitedMs', ms);
}

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
  /** True where the 429s are counted another way (a browser session that watches every response its pages get). */
  countedElsewhere = false,
): Promise<Answer> {
  let answer = first;
  while (read.status(answer) === 429) {
    if (!countedElsewhere) noteRateLimited();
    const wait = retryAfterMs(read.retryAfter(answer)) ?? DEFAULT_RETRY_AFTER_MS;
    if (!fitsIn(limit, wait)) throw tooLong(wait);
    await limit.sleep(wait);
    noteRateLimitWait(wait);
    answer = await again();
  }
  return answer;
}
