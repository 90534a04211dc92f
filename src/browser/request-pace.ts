import type { BrowserContext, Page, Response } from 'playwright-core';
import { noteRateLimited, type RateLimitTally } from '../lib/retry-after.js';

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
