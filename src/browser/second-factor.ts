import type { Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { setTimeout as sleep } from 'node:timers/promises';
import { SessionLostError } from '../domain/errors.js';
import { describeLocator } from '../sitepack/action-language.js';
import type { SecondFactor } from '../sitepack/schema.js';
import { firstVisibleText } from './executor.js';
import { resolveLocator } from './resolve-locator.js';
import { deadline, pollUntil } from '../lib/deadline.js';

/** How long a login page may take to show either the logged-in marker or the code field, and to answer a code. */
const ANSWER_TIMEOUT_MS = 10_000;
const POLL_MS = 100;

/** The one-time code of the TOTP window that holds `at` (ms since the epoch). */
export function totpCode(secret: string, factor: Pick<SecondFactor, 'period' | 'digits' | 'algorithm'>, at: number): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), period: factor.period, digits: factor.digits, algorithm: factor.algorithm });
  return totp.generate({ timestamp: at });
}

/** Milliseconds from `at` to the start of the next TOTP window. */
export function msToNextWindow(period: number, at: number): number {
  const periodMs = period * 1000;
  return periodMs - (at % periodMs);
}

type Seen = 'logged_in' | 'code_field' | 'rejected' | 'nothing';

/**
 * The login's second step, after the pack's login steps sent the password. When the vendor asks for a code (its
 * field shows, not the logged-in marker), the code of the current window is typed and submitted; a refused code is
 * tried once more with the code of the next window (the clock may sit at a window's edge, or a vendor may refuse a
 * code already used by a login a moment ago), then the login fails naming this step. Never traced, never logged:
 * the code and the secret appear in no message.
 */
export async function passSecondFactor(
  page: Page,
  factor: SecondFactor,
  secret: { username: string; totpSecret?: string | undefined },
  loggedIn: Parameters<typeof resolveLocator>[1],
): Promise<void> {
  const asked = await waitFor(page, factor, loggedIn, ['logged_in', 'code_field']);
  if (asked === 'logged_in') return;
  if (asked !== 'code_field') return; // Neither showed: the caller's logged-in check reports the login as failed.
  if (!secret.totpSecret) {
    throw new SessionLostError(
      `login as ${secret.username}: the vendor asks for a second factor (login.secondFactor, field ${describeLocator(factor.field)}) ` +
        `but the identity has no TOTP secret; set credentials.totp_secret (totpSecret in its Secrets Manager secret)`,
      { username: secret.username, step: 'login.secondFactor' },
    );
  }
  const first = await submitCode(page, factor, totpCode(secret.totpSecret, factor, Date.now()), loggedIn);
  if (first === 'logged_in') return;
  // The next window's code: wait until it is the current one, so a vendor that accepts no future code takes it too.
  await sleep(msToNextWindow(factor.period, Date.now()) + 200);
  const second = await submitCode(page, factor, totpCode(secret.totpSecret, factor, Date.now()), loggedIn);
  if (second === 'logged_in') return;
  const shown =
    second === 'rejected'
      ? `the vendor said "${(await firstVisibleText(page, factor.rejected)) ?? factor.rejected[0]}"`
      : 'the page showed neither the logged-in marker nor a rejection';
  throw new SessionLostError(
    `login as ${secret.username}: the second factor (login.secondFactor) was refused for two consecutive TOTP windows (${shown}); ` +
      `the password was accepted: check the identity's totp_secret and this machine's clock, and login.secondFactor's period, digits and algorithm`,
    { username: secret.username, step: 'login.secondFactor' },
  );
}

async function submitCode(page: Page, factor: SecondFactor, code: string, loggedIn: Parameters<typeof resolveLocator>[1]): Promise<Seen> {
  // A refusal still on the page from the last code must not be read as the answer to this one.
  const stale = (await firstVisibleText(page, factor.rejected).catch(() => undefined)) !== undefined;
  try {
    const field = resolveLocator(page, factor.field, {}).first();
    await field.fill(code, { timeout: ANSWER_TIMEOUT_MS });
    const navigated = page.waitForEvent('framenavigated', { timeout: ANSWER_TIMEOUT_MS }).catch(() => undefined);
    if (factor.submit) await resolveLocator(page, factor.submit, {}).first().click({ timeout: ANSWER_TIMEOUT_MS });
    else await field.press('Enter', { timeout: ANSWER_TIMEOUT_MS });
    if (stale) await Promise.race([navigated, waitGone(page, factor.rejected)]);
    await page.waitForLoadState('domcontentloaded').catch(() => undefined);
  } catch (error) {
    // The step's own failure, named as the step (the Playwright message says which locator timed out).
    throw new SessionLostError(
      `login: the second factor (login.secondFactor) could not be submitted: ${(error as Error).message.split('\n')[0]}`,
      {
        step: 'login.secondFactor',
      },
    );
  }
  return waitFor(page, factor, loggedIn, ['logged_in', 'rejected']);
}

/** Resolves once none of the texts shows any more (or after the answer timeout). */
async function waitGone(page: Page, texts: readonly string[]): Promise<void> {
  await pollUntil(
    deadline(ANSWER_TIMEOUT_MS),
    async () => (await firstVisibleText(page, texts).catch(() => undefined)) === undefined,
    POLL_MS,
  );
}

/** Polls until one of the wanted signs shows (the logged-in marker first: it decides), or the answer times out. */
async function waitFor(
  page: Page,
  factor: SecondFactor,
  loggedIn: Parameters<typeof resolveLocator>[1],
  wanted: readonly Seen[],
): Promise<Seen> {
  const look = async (): Promise<Seen> => {
    if (await visible(page, loggedIn)) return 'logged_in';
    if (wanted.includes('rejected') && (await firstVisibleText(page, factor.rejected).catch(() => undefined)) !== undefined)
      return 'rejected';
    if (wanted.includes('code_field') && (await visible(page, factor.field))) return 'code_field';
    return 'nothing';
  };
  let seen: Seen = 'nothing';
  await pollUntil(
    deadline(ANSWER_TIMEOUT_MS),
    async () => {
      seen = await look();
      return seen !== 'nothing';
    },
    POLL_MS,
  );
  return seen;
}

async function visible(page: Page, locator: Parameters<typeof resolveLocator>[1]): Promise<boolean> {
  return resolveLocator(page, locator, {})
    .first()
    .isVisible()
    .catch(() => false);
}
