import type { CDPSession, Page } from 'playwright-core';

/**
 * Reads a page through its own DevTools session instead of Playwright's API.
 * While a write is traced, Playwright records a DOM snapshot of the page
 * before and after every call it makes, and on a long list each snapshot
 * costs several milliseconds; the first locator on every new document also
 * pays for injecting Playwright's own script. A lookup that only places a
 * picture or rules out a message is not an action anyone needs to replay.
 *
 * Expressions run in an isolated world of the main frame, as Playwright's own
 * do: the page's scripts cannot redefine what they call. What they say places
 * a picture, rules something out, or picks the row a step acts in; whatever
 * acts (a click, a fill) still goes through Playwright's locators and checks,
 * and a row picked here is pinned so that Playwright finds that row or
 * nothing (locate.ts).
 */

const sessions = new WeakMap<Page, Promise<CDPSession>>();
const mainFrames = new WeakMap<CDPSession, string>();

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
  let contextId = worlds.get(cdp);
  if (contextId !== undefined) {
    // The world dies with its document: a page that navigated since answers that the context is gone.
    const answer = await cdp
      .send('Runtime.evaluate', { expression, contextId, returnByValue: true, awaitPromise: true })
      .catch((error: Error) => (/context/i.test(error.message) ? undefined : Promise.reject(error)));
    if (answer) return resultOf(answer);
  }
  contextId = await isolatedWorld(cdp);
  worlds.set(cdp, contextId);
  return resultOf(await cdp.send('Runtime.evaluate', { expression, contextId, returnByValue: true, awaitPromise: true }));
}

type Evaluated = Awaited<ReturnType<CDPSession['send']>> & {
  result: { value?: unknown };
  exceptionDetails?: { text: string; exception?: { description?: string } };
};

function resultOf(answer: Evaluated): unknown {
  if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
  return answer.result.value;
}

/** The isolated world last made on each page's current document. */
const worlds = new WeakMap<CDPSession, number>();

/** A new isolated world on the main frame's current document (a world lives as long as its document). */
async function isolatedWorld(cdp: CDPSession): Promise<number> {
  let frameId = mainFrames.get(cdp);
  if (!frameId) {
    frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id;
    mainFrames.set(cdp, frameId);
  }
  const world = await cdp.send('Page.createIsolatedWorld', { frameId, worldName: 'paperclip-quiet' });
  return world.executionContextId;
}
