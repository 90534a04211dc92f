import type { CDPSession, Page } from 'playwright-core';

/**
 * Reads a page through its own DevTools session instead of Playwright's API.
 * While a write is traced, Playwright records a DOM snapshot of the page
 * before and after every call it makes, and on a long list each snapshot
 * costs several milliseconds; a lookup that only places a picture or rules
 * out a message is not an action anyone needs to replay. The expression runs
 * in the page's own world, which the page's scripts share, so what it says is
 * only ever a hint or a quick "no": decisions are made through Playwright's
 * isolated locators.
 */

const sessions = new WeakMap<Page, Promise<CDPSession>>();

/** The page's DevTools session, opened once; rejects outside Chromium. */
export function devtoolsOf(page: Page): Promise<CDPSession> {
  let session = sessions.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    sessions.set(page, session);
    // Outside Chromium there is none: forget the failed attempt so the next caller tries (and falls back) again.
    session.catch(() => sessions.delete(page));
  }
  return session;
}

/** The value of `expression` in the page's main frame (a promise is awaited); throws when it throws. */
export async function evaluateQuietly(page: Page, expression: string): Promise<unknown> {
  const cdp = await devtoolsOf(page);
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
  if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
  return result.value;
}
