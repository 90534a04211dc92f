import type { BrowserContext, FrameLocator, Page, Response } from 'playwright-core';
import { accountFor, OPS_ACCOUNT } from '../../../backoffices/simulator/accounts.js';
import { SimulatorControl } from '../../../backoffices/simulator/control-client.js';
import { startSimulator, type RunningSimulator } from '../../../backoffices/simulator/server.js';
import { browserTestKit, CONTROL_TOKEN, settledValue, type TestBackOffice, waitFor } from '../../support/browser-back-office.js';

export { CONTROL_TOKEN, settledValue, waitFor };

export type TestSimulator = TestBackOffice<RunningSimulator, SimulatorControl>;
const kit = browserTestKit({ startServer: startSimulator, Control: SimulatorControl, locale: 'zh-CN', signIn: login });

/** A simulator with the control API on and quick settling, as every browser test wants. */
export const startTestSimulator = kit.start;

/** One simulator for the whole test file, reset before each test (see useBrowserBackOffice). */
export const useTestSimulator = kit.use;

export const newContext = kit.newContext;

/** A new page logged in as `who` through the form, then at `path` (e.g. `/diff/list?tenant=acme`) if given. */
export const loggedInPage = kit.signedIn;

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

/** Logged in as acme on acme's list (page 1), 标记处理 confirmed on `billNo`: the page with the toast up. */
export async function markedOnTheList(baseUrl: string, billNo: string): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await loggedInPage(baseUrl, 'acme', '/diff/list?tenant=acme');
  await confirmRowAction(opened.page, billNo, '标记处理');
  return opened;
}

/** Opens the row's confirm dialog and confirms; resolves when the toast is up. */
export async function confirmRowAction(page: Page, billNo: string, button: '标记处理' | '撤销处理'): Promise<void> {
  await row(page, billNo).getByRole('button', { name: button }).click();
  await page.getByRole('dialog').getByRole('button', { name: '确认' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
}

/**
 * On a bill's refund page: fills the refund form (in its iframe) with `amount` and `reason`, accepts the browser's
 * confirm and submits; the form and the answer to its POST.
 */
export async function submitRefund(page: Page, amount: string, reason: string): Promise<{ form: FrameLocator; response: Response }> {
  const form = page.frameLocator('iframe[title="退款表单"]');
  await form.getByLabel('退款金额').fill(amount);
  await form.getByLabel('退款原因').fill(reason);
  page.on('dialog', (d) => void d.accept());
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    form.getByRole('button', { name: '提交退款' }).click(),
  ]);
  return { form, response };
}
