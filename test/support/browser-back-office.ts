import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Page } from 'playwright-core';
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

/** A context in the shared browser for the whole test file: opened before its first test, closed with the browser after its last. */
export function useBrowserContext(): { context: BrowserContext } {
  return useFixture(async () => ({ context: await (await sharedBrowser()).newContext() }), {
    stop: async ({ context }) => {
      await context.close();
      await closeSharedBrowser();
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
 * How the browser tests of one back office start it and open pages on it: `start` with BROWSER_TEST_START under the
 * given options and its control client on the same address; `use`, one for the whole file (useBrowserBackOffice);
 * `newContext`, a context in the back office's language; `signedIn`, a new page signed in as a user by `signIn`
 * (the back office's own login form), then at `path` if one is given.
 */
export function browserTestKit<
  Options extends object,
  Server extends { url: string; close(): Promise<void> },
  Control extends { reset(): Promise<unknown> },
>(back: {
  startServer: (options: Options) => Promise<Server>;
  Control: new (url: string, token: string) => Control;
  locale: string;
  signIn: (page: Page, baseUrl: string, who: string) => Promise<void>;
}) {
  const start = async (options: Options = {} as Options): Promise<TestBackOffice<Server, Control>> => {
    const server = await back.startServer({ ...BROWSER_TEST_START, ...options });
    return { server, url: server.url, ctl: new back.Control(server.url, CONTROL_TOKEN) };
  };
  const use = (options: Options = {} as Options): TestBackOffice<Server, Control> =>
    useBrowserBackOffice(
      () => start(options),
      (t) => t.server.close(),
    );
  const newContext = () => newBrowserContext(back.locale);
  const signedIn = async (baseUrl: string, who: string, path?: string): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await newContext();
    const page = await context.newPage();
    await back.signIn(page, baseUrl, who);
    if (path !== undefined) await page.goto(`${baseUrl}${path}`);
    return { context, page };
  };
  return { start, use, newContext, signedIn };
}

/** Polls `probe` until `accept` takes its value or the time is up; returns the last value, for the test to assert. */
export async function waitFor<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}

/** waitFor a value equal to `expected`: returns the last value read, `expected` once the back office has settled. */
export function settledValue<T>(probe: () => Promise<T>, expected: T, timeoutMs = 5000): Promise<T> {
  return waitFor(probe, (value) => value === expected, timeoutMs);
}
