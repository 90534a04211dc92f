import type { Page } from 'playwright-core';
import { browserTestKit, CONTROL_TOKEN, settledValue, type TestBackOffice, waitFor } from '../../support/browser-back-office.js';
import { LedgerlyControl } from '../../../backoffices/ledgerly/control-client.js';
import { LEDGERLY_OPS_USER, ledgerlyUserFor, startLedgerly, type RunningLedgerly } from '../../../backoffices/ledgerly/server.js';

export { CONTROL_TOKEN, settledValue, waitFor };

export type TestLedgerly = TestBackOffice<RunningLedgerly, LedgerlyControl>;
const kit = browserTestKit({ startServer: startLedgerly, Control: LedgerlyControl, locale: 'en-US', signIn });

export const startTestLedgerly = kit.start;

/** One Ledgerly for the whole file, reset before each test (see useBrowserBackOffice). */
export const useTestLedgerly = kit.use;

export const newContext = kit.newContext;

/** A new page signed in as `who` on the list, then at `path` (e.g. `/#/discrepancies/N-7001`) if given. */
export const signedInPage = kit.signedIn;

export function credentialsFor(who: string): { username: string; password: string } {
  return who === 'ops' ? LEDGERLY_OPS_USER : ledgerlyUserFor(who);
}

/** Signs in on the hash-route login page as a user would; resolves when the list has rendered. */
export async function signIn(page: Page, baseUrl: string, who: string): Promise<void> {
  const { username, password } = credentialsFor(who);
  await page.goto(`${baseUrl}/#/login`);
  await page.getByLabel('Email').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Discrepancies' }).waitFor();
}

/** Opens a discrepancy's detail route and waits for its content. */
export async function openDetail(page: Page, baseUrl: string, id: string): Promise<void> {
  await page.goto(`${baseUrl}/#/discrepancies/${id}`);
  await page.getByRole('heading', { name: new RegExp(`^${id} · `) }).waitFor();
}

/** The text next to a label on the detail page (v1 layout). */
export async function detailValue(page: Page, label: string): Promise<string> {
  return (await page.getByText(label, { exact: true }).locator('xpath=following-sibling::div[1]').textContent()) ?? '';
}

/** Saves a resolution reason through the More → Edit modal (the first vendor write of a resolve). */
export async function saveReason(page: Page, reason: string): Promise<void> {
  await page.getByRole('button', { name: 'More' }).click();
  await page.getByRole('menuitem', { name: 'Edit' }).click();
  await page.getByLabel('Resolution reason').fill(reason);
  await page.getByRole('button', { name: 'Save' }).click();
}
