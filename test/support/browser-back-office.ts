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

/** A back office started for a browser test, with its control client. */
export interface TestBackOffice<Server, Control> {
  server: Server;
  ctl: Control;
  url: string;
}

/**
 * How the browser tests of one back office start it: `start` with BROWSER_TEST_START under the given
 * options and its control client on the same address; `use`, one for the whole file (useBrowserBackOffice).
 */
export function browserTestStarts<
  Options extends object,
  Server extends { url: string; close(): Promise<void> },
  Control extends { reset(): Promise<unknown> },
>(startServer: (options: Options) => Promise<Server>, control: (url: string, token: string) => Control) {
  const start = async (options: Options): Promise<TestBackOffice<Server, Control>> => {
    const server = await startServer({ ...BROWSER_TEST_START, ...options });
    return { server, url: server.url, ctl: control(server.url, CONTROL_TOKEN) };
  };
  const use = (options: Options): TestBackOffice<Server, Control> =>
    useBrowserBackOffice(
      () => start(options),
      (t) => t.server.close(),
    );
  return { start, use };
}
