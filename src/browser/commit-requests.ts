import type { BrowserContext, Request, Response } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentRateLimitTally, noteRateLimited, retryAfterMs } from '../lib/retry-after.js';
import { deadline } from '../lib/deadline.js';

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
