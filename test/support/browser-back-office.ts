import type { BrowserContext } from 'playwright-core';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { useFixture } from './fixture.js';

export const CONTROL_TOKEN = 'test-control-token';

/** How browser tests start a back office: the control API on, and writes that settle quickly. */
export const BROWSER_TEST_START = { controlToken: CONTROL_TOKEN, asyncDelayMs: 150 } as const;

/**
 * One back office for the whole test file, reset through its control API
 * before each test, closed with the shared browser afterwards.
 */
export function useBrowserBackOffice<T extends { ctl: { reset(): Promise<unknown> } }>(
  start: () => Promise<T>,
  close: (fixture: T) => Promise<void>,
): T {
  return useFixture(start, {
    reset: (t) => t.ctl.reset(),
    stop: async (t) => {
      await closeSharedBrowser();
      await close(t);
    },
  });
}

/** A fresh context in the shared browser, in the back office's language, at a desktop viewport. */
export async function newBrowserContext(locale: string): Promise<BrowserContext> {
  const browser = await sharedBrowser();
  return browser.newContext({ locale, viewport: { width: 1280, height: 800 } });
}
