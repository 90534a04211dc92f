import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { sharedBrowser } from '../src/browser/chromium.js';
import { BILL_NO_PATTERN } from '../backoffices/simulator/server.js';

/**
 * The unguarded baseline: the article's V1 script (chapter 05) written fresh in
 * TypeScript. Log in, query, and for each pending bill click 标记处理, 确认, then
 * re-query once and look at the row. No idempotency marker, no claim, no
 * screenshots, no trace, no independent readback: this is what a write costs
 * when nothing makes it safe. With `evidenceDir` it also keeps V1's own
 * evidence (before/after screenshots, a trace per context), still without its
 * idempotency marker files. With concurrency N, N contexts share one login and
 * take bills from one queue.
 */

export interface RawScriptOptions {
  baseUrl: string;
  tenant: string;
  username: string;
  password: string;
  concurrency: number;
  /** Defaults to the process-wide browser, so the raw and guarded paths drive the same Chromium. */
  browser?: () => Promise<Browser>;
  /**
   * V1 as printed also keeps evidence: a full-page screenshot before the click and after the
   * re-query, and one Playwright trace per context. Given a folder, the script does the same.
   */
  evidenceDir?: string;
}

export type RawOutcome = 'done' | 'stale' | 'not_landed';

export interface RawItem {
  billNo: string;
  worker: number;
  startedAt: number;
  endedAt: number;
  latencyMs: number;
  outcome: RawOutcome;
  /** data-status of the row after the one re-query (PROCESSING counts as landed: the script trusts the list). */
  observedStatus: string | null;
}

export interface RawRun {
  startedAt: number;
  endedAt: number;
  wallMs: number;
  loginMs: number;
  listed: number;
  items: RawItem[];
}

const TIMEOUT_MS = 15_000;

function contextOptions(storageState?: Awaited<ReturnType<BrowserContext['storageState']>>) {
  return { locale: 'zh-CN', viewport: { width: 1280, height: 860 }, ...(storageState ? { storageState } : {}) };
}

/** goto the list, then 查询, as V1 does; the hidden page_size keeps every bill on one page. */
async function query(page: Page, baseUrl: string): Promise<void> {
  await page.goto(new URL('/diff/list?page_size=100', baseUrl).toString());
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: '查询' }).click()]);
}

async function readPending(page: Page): Promise<string[]> {
  await page.locator('table#diff tbody tr').first().waitFor({ state: 'visible', timeout: TIMEOUT_MS });
  const rows = await page.locator('table#diff tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      billNo: tr.querySelector('td[data-field=bill_no]')?.textContent?.trim() ?? '',
      status: tr.querySelector('td[data-field=status]')?.textContent?.trim() ?? '',
    })),
  );
  return rows.filter((r) => r.status === '待处理').map((r) => r.billNo);
}

async function markOne(page: Page, billNo: string, evidenceDir?: string): Promise<{ outcome: RawOutcome; observedStatus: string | null }> {
  // Bill numbers come from the vendor's page; only well-formed ones reach a selector.
  if (!BILL_NO_PATTERN.test(billNo)) throw new Error(`unexpected bill number on the list page: ${JSON.stringify(billNo)}`);
  const row = page.locator(`tr[data-bill="${billNo}"]`);
  if ((await row.getAttribute('data-status')) !== 'PENDING')
    return { outcome: 'stale', observedStatus: await row.getAttribute('data-status') };
  if (evidenceDir) await page.screenshot({ path: join(evidenceDir, `${billNo}-before.png`), fullPage: true });
  await row.getByRole('button', { name: '标记处理' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: '确认' }).click();
  await dialog.waitFor({ state: 'hidden', timeout: TIMEOUT_MS });
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: '查询' }).click()]);
  const observedStatus = await row.getAttribute('data-status');
  if (evidenceDir) await page.screenshot({ path: join(evidenceDir, `${billNo}-after.png`), fullPage: true });
  const landed = observedStatus === 'PROCESSED' || observedStatus === 'PROCESSING';
  return { outcome: landed ? 'done' : 'not_landed', observedStatus };
}

export async function runRawScript(options: RawScriptOptions): Promise<RawRun> {
  const browser = await (options.browser ?? sharedBrowser)();
  const startedAt = Date.now();
  const login = await browser.newContext(contextOptions());
  let storageState: Awaited<ReturnType<BrowserContext['storageState']>>;
  let pending: string[];
  try {
    const page = await login.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    await page.goto(new URL('/login', options.baseUrl).toString());
    await page.getByLabel('用户名').fill(options.username);
    await page.getByLabel('密码').fill(options.password);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByTestId('current-user').waitFor({ state: 'visible' });
    storageState = await login.storageState();
    await query(page, options.baseUrl);
    pending = await readPending(page);
  } finally {
    await login.close();
  }
  const loginMs = Date.now() - startedAt;

  const queue = [...pending];
  const items: RawItem[] = [];
  const worker = async (index: number) => {
    const context = await browser.newContext(contextOptions(storageState));
    try {
      if (options.evidenceDir) await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
      const page = await context.newPage();
      page.setDefaultTimeout(TIMEOUT_MS);
      await query(page, options.baseUrl);
      for (let billNo = queue.shift(); billNo !== undefined; billNo = queue.shift()) {
        const itemStart = Date.now();
        const result = await markOne(page, billNo, options.evidenceDir);
        const itemEnd = Date.now();
        items.push({ billNo, worker: index, startedAt: itemStart, endedAt: itemEnd, latencyMs: itemEnd - itemStart, ...result });
      }
      if (options.evidenceDir) await context.tracing.stop({ path: join(options.evidenceDir, `trace-${index}.zip`) });
    } finally {
      await context.close();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, pending.length)) }, (_, i) => worker(i)));
  const endedAt = Date.now();
  return { startedAt, endedAt, wallMs: endedAt - startedAt, loginMs, listed: pending.length, items };
}
