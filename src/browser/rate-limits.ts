import type { APIResponse, BrowserContext, Page, Request, Response } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReadFailedError } from '../domain/errors.js';
import {
  DEFAULT_RETRY_AFTER_MS,
  currentRateLimitTally,
  describeRateLimit,
  noteRateLimited,
  noteRateLimitWait,
  retryAfterMs,
  waitOutRateLimits,
  type RateLimitTally,
} from '../lib/retry-after.js';
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
    // A session that watches its pages' responses (a paced pack: watchAndPaceContext) has counted the 429 already.
    currentRateLimitTally()?.pagesWatched ?? false,
  );
}

/** A 429 the vendor sent to one of the app's own requests, as the page's context saw it. */
export interface SeenRateLimit {
  request: string;
  retryAfterMs: number | undefined;
}

/** What `settle` saw of the commit requests: how long it waited, and the requests still unanswered when it stopped. */
export interface CommitRequestsSettled {
  waitedMs: number;
  unanswered: string[];
}

/** The least time a commit click is given to send its request before nothing in flight counts as nothing sent. */
const COMMIT_REQUEST_START_MS = 250;

/**
 * Watches the requests that a write's commit clicks send (every request that is not a GET or HEAD, from any page or
 * frame of the context), from the first commit click on. `refusal()` says whether the vendor refused them with 429
 * and accepted none: then nothing was committed (the vendor turned the request away before acting on it), so the
 * write is "not committed", never "may have landed". One accepted request (an earlier stage's write) means
 * something landed, and the 429 proves nothing.
 *
 * `settle()` waits until none of those requests is in flight. Many pages show success the moment the button is
 * pressed (an optimistic toast, a status patched in place) while the write's request is still on its way; leaving or
 * closing the page then aborts the request, and a vendor that drops a write whose client went away (a request context
 * cancelled on disconnect) never applies it. So nothing navigates or closes the page that clicked while its commit
 * request is unanswered, up to the given time.
 */
export function watchCommitRequests(
  context: BrowserContext,
  origin: string,
): {
  refusal(): SeenRateLimit | undefined;
  /** A later commit click of the write: its request is waited for as the first one's. */
  clicked(): void;
  settle(timeoutMs: number): Promise<CommitRequestsSettled>;
  stop(): void;
} {
  // The response events run outside the step's async context: the step's tally is taken now.
  const tally = currentRateLimitTally();
  let refused: SeenRateLimit | undefined;
  let accepted = false;
  // Both are set just before each commit click (the watch starts just before the first): a write request seen after
  // that was sent by the click.
  let lastClick = Date.now();
  let sentSinceClick = false;
  const inFlight = new Set<Request>();
  const ofTheWrite = (request: Request): URL | undefined => {
    if (request.method() === 'GET' || request.method() === 'HEAD') return undefined;
    try {
      const url = new URL(request.url());
      return url.origin === origin ? url : undefined;
    } catch {
      return undefined;
    }
  };
  const onRequest = (request: Request) => {
    if (!ofTheWrite(request)) return;
    inFlight.add(request);
    sentSinceClick = true;
  };
  const onSettled = (request: Request) => {
    inFlight.delete(request);
  };
  const onResponse = (response: Response) => {
    const request = response.request();
    const url = ofTheWrite(request);
    if (!url) return;
    if (response.status() === 429) {
      if (!tally?.pagesWatched) noteRateLimited(1, tally);
      refused ??= { request: `${request.method()} ${url.pathname}`, retryAfterMs: retryAfterMs(response.headers()['retry-after']) };
    } else if (response.status() < 400) accepted = true;
  };
  context.on('request', onRequest);
  context.on('requestfinished', onSettled);
  context.on('requestfailed', onSettled);
  context.on('response', onResponse);
  return {
    refusal: () => (accepted ? undefined : refused),
    clicked: () => {
      lastClick = Date.now();
      sentSinceClick = false;
    },
    settle: async (timeoutMs) => {
      const started = Date.now();
      const limit = deadline(timeoutMs);
      // A click's request reaches this process a moment after the click returns: when none has been seen yet, it is
      // given that moment; once one has, only what is still in flight is waited for.
      const startBy = lastClick + COMMIT_REQUEST_START_MS;
      while (limit.remaining() > 0 && (inFlight.size > 0 || (!sentSinceClick && Date.now() < startBy))) {
        await sleep(Math.min(50, Math.max(1, limit.remaining())));
      }
      return {
        waitedMs: Date.now() - started,
        unanswered: [...inFlight].map((r) => `${r.method()} ${ofTheWrite(r)?.pathname ?? r.url()}`),
      };
    },
    stop: () => {
      context.off('request', onRequest);
      context.off('requestfinished', onSettled);
      context.off('requestfailed', onSettled);
      context.off('response', onResponse);
    },
  };
}

export async function sleepOut(wait: number | undefined, capMs: number): Promise<void> {
  const ms = Math.min(wait ?? DEFAULT_RETRY_AFTER_MS, capMs);
  await sleep(ms);
  noteRateLimitWait(ms);
}

export { describeRateLimit };

/** What a paced context is doing now: the tally of the task that holds it (none between tasks). */
export interface ContextWork {
  tally: RateLimitTally | undefined;
}

/** How a paced identity's contexts are paced: the vendor's origin, the pack's `pace`, and the identity's pace. */
export interface PagePacing {
  origin: string;
  paths?: readonly string[] | undefined;
  assets: boolean;
  take: () => Promise<number>;
  work: ContextWork;
}

/**
 * Counts every 429 the vendor sends to a paced context's pages and frames (navigations, the app's own calls, commit
 * requests) for the task that holds the context. Installed once per context, only for a pack with a pace.
 */
export function watchRateLimits(context: BrowserContext, origin: string, work: ContextWork): void {
  context.on('response', (response: Response) => {
    if (response.status() !== 429 || !response.url().startsWith(`${origin}/`)) return;
    noteRateLimited(1, work.tally);
  });
}

/** The escape of `text` for a CDP Fetch URL pattern, where `*` and `?` are wildcards and `\` escapes. */
function escapeUrlPattern(text: string): string {
  return text.replace(/[*?\\]/g, '\\$&');
}

/**
 * The requests the browser pauses for the pace (CDP Fetch request patterns): the vendor's origin and the pack's
 * `paths`, and only page loads and the app's own calls (documents, XHR, fetch) unless `pace.assets` says scripts,
 * styles, images and fonts count too.
 */
export function pacedRequestPatterns(pacing: Pick<PagePacing, 'origin' | 'paths' | 'assets'>): Array<Record<string, string>> {
  const urls = (pacing.paths?.length ? pacing.paths : ['/']).map((path) => `${escapeUrlPattern(pacing.origin + path)}*`);
  const types = pacing.assets ? [undefined] : ['Document', 'XHR', 'Fetch'];
  return urls.flatMap((urlPattern) =>
    types.map((resourceType) => ({ urlPattern, requestStage: 'Request', ...(resourceType ? { resourceType } : {}) })),
  );
}

const pacedPages = new WeakMap<Page, Promise<void>>();

/**
 * Holds each request of `page` (and its same-process frames) that the pace counts until the identity's pace lets
 * it go. The browser pauses only those requests (the CDP Fetch patterns above): everything else, the site's static
 * files above all, never leaves the browser's network stack.
 *
 * Why not a Playwright route: any route makes the browser pause every request of the page and wait for this
 * process to let it go, and a page's `domcontentloaded` waits for its frames' module scripts (Playwright counts
 * the frame tree). On a portal whose work frame loads some fifty module files, one round trip per file through a
 * busy process pushed opening the page past its deadline (a trace showed each static file taking 2 to 5 s, none
 * of them paced). The pause always ends: when the page closed or navigated while the request waited, letting it go
 * fails and is ignored. Idempotent per page.
 */
export function pacePage(context: BrowserContext, page: Page, pacing: PagePacing): Promise<void> {
  let ready = pacedPages.get(page);
  if (!ready) {
    ready = (async () => {
      const cdp = await context.newCDPSession(page);
      cdp.on('Fetch.requestPaused', ({ requestId }) => {
        void (async () => {
          try {
            const waited = await pacing.take();
            if (waited > 0) pacing.work.tally?.add('pacedMs', waited);
          } finally {
            await cdp.send('Fetch.continueRequest', { requestId }).catch(() => undefined);
          }
        })();
      });
      await cdp.send('Fetch.enable', { patterns: pacedRequestPatterns(pacing) });
    })();
    pacedPages.set(page, ready);
  }
  return ready;
}

/**
 * Paces every page of a paced identity's context: those its caller opens (awaiting `pacePage` before the page's
 * first request) and those the vendor's app opens itself (a popup, paced from just after it opens).
 */
export function paceContext(context: BrowserContext, pacing: PagePacing): void {
  watchRateLimits(context, pacing.origin, pacing.work);
  context.on('page', (page) => void pacePage(context, page, pacing).catch(() => undefined));
}

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
