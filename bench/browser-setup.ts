import sparticuz from '@sparticuz/chromium';
import type { Browser, Page } from 'playwright-core';
import { closeSharedBrowser, launchChromium, sharedBrowser } from '../src/browser/chromium.js';
import { IdentitySessions, type IdentitySecret } from '../src/browser/identity-sessions.js';
import { evidenceScreenshot } from '../src/browser/evidence-screenshot.js';
import type { SitePack } from '../src/sitepack/schema.js';
import type { RequestTiming } from '../backoffices/simulator/server.js';
import { summarize, type Summary } from './stats.js';
import { treeMemory, type TreeMemory } from './browser-memory.js';
import { busyMs, toRequests, within } from './vendor-wait.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Browser costs outside a batch: a cold launch against a new context on a
 * warm browser, the warm per-task setup Paperclip does before acting (a fresh
 * context carrying the identity's stored session), and what one more
 * concurrent context costs in memory compared with one more browser.
 */

export interface BrowserSetupReport {
  coldLaunch: {
    /** @sparticuz/chromium's executablePath(): inflates the binary to /tmp on a fresh machine, a no-op afterwards. */
    executablePathMs: number;
    /** launch + first context + first page, the first sample through sharedBrowser(). */
    launchMs: Summary;
    firstPageMs: Summary;
    totalMs: Summary;
  };
  warmReuse: { newContextAndPageMs: Summary };
  warmTaskSetup: {
    /** The first open logs in (no stored session yet). */
    firstOpenWithLoginMs: number;
    /** IdentitySessions.open on a warm browser with a stored session: context + session check + page, ready to act. */
    openTracedMs: Summary;
    openUntracedMs: Summary;
    /** Vendor time during the open: none since a kept context is reused without a "still logged in?" probe. */
    vendorProbeMs: Summary;
    /** Closing a traced session: stop tracing, write and read the zip, close the context. */
    closeTracedMs: Summary;
    closeUntracedMs: Summary;
  };
  /** Unit costs of what a guarded step does on a warm page, to price the avoidable ones. */
  pageOps: {
    listPageLoadMs: Summary;
    detailPageLoadMs: Summary;
    fullPageScreenshotMs: Summary;
    /** The visible viewport only (1280×860), PNG, captured as the guarded path captures its evidence. */
    viewportScreenshotMs: Summary;
    /** Full page as JPEG (quality 80). */
    fullPageJpegScreenshotMs: Summary;
  };
  memory: {
    /** The browser alone (no context): what one more browser costs at least. */
    browserOnly: TreeMemory;
    /** The browser with one logged-in context showing the list page. */
    browserWithOnePage: TreeMemory;
    /** One entry per extra concurrent context (each logged in, list page loaded). */
    withContexts: Array<TreeMemory & { contexts: number }>;
    perExtraContextRssMiB: number;
    perExtraContextPssMiB: number;
  };
}

const time = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
};

export async function measureBrowserSetup(options: {
  coldSamples: number;
  reuseSamples: number;
  setupSamples: number;
  contexts: number;
  baseUrl: string;
  pack: SitePack;
  identityId: string;
  secret: IdentitySecret;
  tenant: string;
  /** A bill of the tenant, for timing a detail page load. */
  sampleBill: string;
  timings: () => Promise<RequestTiming[]>;
  log: (line: string) => void;
}): Promise<BrowserSetupReport> {
  const { log } = options;
  await closeSharedBrowser();
  const [, executablePathMs] = await time(() => sparticuz.executablePath());

  // Cold: the first sample is the shared browser itself (one browser per process, as in Lambda).
  const launches: number[] = [];
  const firstPages: number[] = [];
  const coldOne = async (launch: () => Promise<Browser>, keep: boolean) => {
    const [browser, launchMs] = await time(launch);
    const [context, pageMs] = await time(async () => {
      const c = await browser.newContext({ locale: 'zh-CN' });
      await c.newPage();
      return c;
    });
    await context.close();
    launches.push(launchMs);
    firstPages.push(pageMs);
    if (!keep) await browser.close();
  };
  await coldOne(sharedBrowser, true);
  for (let i = 1; i < options.coldSamples; i++) await coldOne(() => launchChromium(), false);
  log(`cold launch: ${launches.map((m) => Math.round(m)).join(', ')} ms`);

  const browser = await sharedBrowser();
  const reuse: number[] = [];
  for (let i = 0; i < options.reuseSamples; i++) {
    const [context, ms] = await time(async () => {
      const c = await browser.newContext({ locale: 'zh-CN' });
      await c.newPage();
      return c;
    });
    reuse.push(ms);
    await context.close();
  }

  const sessions = new IdentitySessions(sharedBrowser, options.pack, options.baseUrl);
  const [first, firstOpenWithLoginMs] = await time(() => sessions.open(options.identityId, options.secret, 'write', { trace: false }));
  await first.close();
  const openTraced: number[] = [];
  const openUntraced: number[] = [];
  const closeTraced: number[] = [];
  const closeUntraced: number[] = [];
  const windows: Array<{ start: number; end: number }> = [];
  for (let i = 0; i < options.setupSamples; i++) {
    for (const trace of [true, false]) {
      const start = Date.now();
      const [session, openMs] = await time(() => sessions.open(options.identityId, options.secret, 'write', { trace }));
      windows.push({ start, end: Date.now() });
      const [, closeMs] = await time(() => session.close());
      (trace ? openTraced : openUntraced).push(openMs);
      (trace ? closeTraced : closeUntraced).push(closeMs);
    }
  }
  const requests = toRequests(await options.timings());
  const probes = windows.map((w) => busyMs(within(requests, w), w));

  // Memory: the browser alone, then one more logged-in context (with the list page) at a time.
  await sleep(500);
  const browserOnly = treeMemory();
  const listUrl = new URL(`/diff/list?tenant=${options.tenant}&status=all&page_size=100`, options.baseUrl).toString();
  const open: Array<{ page: Page; close(): Promise<unknown> }> = [];
  const withContexts: Array<TreeMemory & { contexts: number }> = [];
  const listLoads: number[] = [];
  const detailLoads: number[] = [];
  const screenshots: number[] = [];
  const viewportShots: number[] = [];
  const jpegShots: number[] = [];
  try {
    for (let n = 1; n <= options.contexts; n++) {
      const session = await sessions.open(options.identityId, options.secret, 'read', { trace: false });
      open.push(session);
      await session.page.goto(listUrl);
      await sleep(400);
      withContexts.push({ contexts: n, ...treeMemory() });
    }
    const page = open[0]?.page;
    if (page) {
      for (let i = 0; i < options.setupSamples; i++) {
        listLoads.push((await time(() => page.goto(listUrl)))[1]);
        screenshots.push((await time(() => page.screenshot({ fullPage: true })))[1]);
        viewportShots.push((await time(() => evidenceScreenshot(page)))[1]);
        jpegShots.push((await time(() => page.screenshot({ fullPage: true, type: 'jpeg', quality: 80 })))[1]);
        detailLoads.push((await time(() => page.goto(new URL(`/diff/${options.sampleBill}`, options.baseUrl).toString())))[1]);
      }
    }
  } finally {
    for (const s of open) await s.close().catch(() => undefined);
  }
  const last = withContexts[withContexts.length - 1];
  const firstCtx = withContexts[0];
  const extra = withContexts.length > 1 && last && firstCtx ? withContexts.length - 1 : 0;
  log(`memory: browser ${browserOnly.rssMiB} MiB RSS; with ${withContexts.length} contexts ${last?.rssMiB ?? '-'} MiB`);

  return {
    coldLaunch: {
      executablePathMs: Math.round(executablePathMs),
      launchMs: summarize(launches),
      firstPageMs: summarize(firstPages),
      totalMs: summarize(launches.map((l, i) => l + firstPages[i]!)),
    },
    warmReuse: { newContextAndPageMs: summarize(reuse) },
    pageOps: {
      listPageLoadMs: summarize(listLoads),
      detailPageLoadMs: summarize(detailLoads),
      fullPageScreenshotMs: summarize(screenshots),
      viewportScreenshotMs: summarize(viewportShots),
      fullPageJpegScreenshotMs: summarize(jpegShots),
    },
    warmTaskSetup: {
      firstOpenWithLoginMs: Math.round(firstOpenWithLoginMs),
      openTracedMs: summarize(openTraced),
      openUntracedMs: summarize(openUntraced),
      vendorProbeMs: summarize(probes),
      closeTracedMs: summarize(closeTraced),
      closeUntracedMs: summarize(closeUntraced),
    },
    memory: {
      browserOnly,
      browserWithOnePage: firstCtx ?? browserOnly,
      withContexts,
      // Extra contexts beyond the first: the marginal cost of one more concurrent task.
      perExtraContextRssMiB: extra && last && firstCtx ? Math.round(((last.rssMiB - firstCtx.rssMiB) / extra) * 10) / 10 : Number.NaN,
      perExtraContextPssMiB: extra && last && firstCtx ? Math.round(((last.pssMiB - firstCtx.pssMiB) / extra) * 10) / 10 : Number.NaN,
    },
  };
}
