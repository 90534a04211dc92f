import type { Page } from 'playwright-core';
import { accountFor, OPS_ACCOUNT } from '../../../backoffices/simulator/accounts.js';
import { SimulatorControl } from '../../../backoffices/simulator/control-client.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../backoffices/simulator/server.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { BROWSER_TEST_START, CONTROL_TOKEN, newBrowserContext, useBrowserBackOffice } from '../../support/browser-back-office.js';

export { CONTROL_TOKEN };

export interface TestSimulator {
  sim: RunningSimulator;
  ctl: SimulatorControl;
  url: string;
}

/** A simulator with the control API on and quick settling, as every browser test wants. */
export async function startTestSimulator(options: SimulatorOptions = {}): Promise<TestSimulator> {
  const sim = await startSimulator({ ...BROWSER_TEST_START, ...options });
  return { sim, url: sim.url, ctl: new SimulatorControl(sim.url, CONTROL_TOKEN) };
}

/** One simulator for the whole test file, reset before each test (see useBrowserBackOffice). */
export function useTestSimulator(options: SimulatorOptions = {}): TestSimulator {
  return useBrowserBackOffice(
    () => startTestSimulator(options),
    (t) => t.sim.close(),
  );
}

export const newContext = () => newBrowserContext('zh-CN');

export function credentialsFor(who: string): { username: string; password: string } {
  if (who === 'ops') return OPS_ACCOUNT;
  return accountFor(who);
}

/** Logs in through the form, the way an operator (or the product) does. */
export async function login(page: Page, baseUrl: string, who: string): Promise<void> {
  const { username, password } = credentialsFor(who);
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('用户名').fill(username);
  await page.getByLabel('密码').fill(password);
  await page.getByRole('button', { name: '登录' }).click();
  await page.waitForURL(/\/diff\/list/);
}

export interface ListedRow {
  billNo: string;
  status: string;
  statusLabel: string;
  amount: string;
}

/** Reads the v1 table through the structured contract. */
export async function readRows(page: Page): Promise<ListedRow[]> {
  return page.locator('table#diff tbody tr[data-bill]').evaluateAll((rows) =>
    rows.map((r) => ({
      billNo: r.querySelector('[data-field="bill_no"]')?.textContent?.trim() ?? '',
      status: r.getAttribute('data-status') ?? '',
      statusLabel: r.querySelector('[data-field="status"]')?.textContent?.trim() ?? '',
      amount: r.querySelector('[data-field="amount"]')?.textContent?.trim() ?? '',
    })),
  );
}

export function row(page: Page, billNo: string) {
  return page.locator('table#diff tbody tr').filter({ has: page.locator(`td[data-field="bill_no"]`, { hasText: billNo }) });
}

/** Opens the row's confirm dialog and confirms; resolves when the toast is up. */
export async function confirmRowAction(page: Page, billNo: string, button: '标记处理' | '撤销处理'): Promise<void> {
  await row(page, billNo).getByRole('button', { name: button }).click();
  await page.getByRole('dialog').getByRole('button', { name: '确认' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
}

export async function waitFor<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}
