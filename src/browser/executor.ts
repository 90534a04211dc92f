import { readFile } from 'node:fs/promises';
import type { Dialog, Page } from 'playwright-core';
import { fillTemplate, type Step } from '../sitepack/action-language.js';
import type { SitePack } from '../sitepack/schema.js';
import { ReadFailedError, SessionLostError } from '../domain/errors.js';
import { resolveLocator, scopeRoot, type RowBinding } from './locate.js';

/**
 * Runs whitelisted steps on a page. It decides nothing about the business: it
 * makes each step reliable (waiting, frames, new tabs, native dialogs) and
 * reports what it saw. Native dialogs are dismissed unless the step expects
 * exactly that dialog, so nothing is confirmed by accident.
 */

export interface StepContext {
  baseUrl: string;
  params: Readonly<Record<string, string>>;
  /** The item the `row` scope refers to. */
  row?: RowBinding;
  sessionLost: SitePack['sessionLost'];
  /** True while Playwright tracing records this context: secret fills are refused then. */
  traced: boolean;
  timeoutMs?: number;
}

export interface DialogRecord {
  type: string;
  message: string;
  accepted: boolean;
  expected: boolean;
}

export interface StepResult {
  /** The page to continue on (a step may open a new tab). */
  page: Page;
  extracted?: { as: string; value: string | string[][] };
  download?: { as: string; suggestedName: string; body: Buffer };
  screenshot?: { as: string; body: Buffer };
}

interface DialogPolicy {
  expected?: { accept: boolean; messageContains: string };
  seen: DialogRecord[];
}

const policies = new WeakMap<Page, DialogPolicy>();

/** Installs the dismiss-by-default dialog policy on a page (once). */
export function dialogPolicy(page: Page): DialogPolicy {
  let policy = policies.get(page);
  if (!policy) {
    const created: DialogPolicy = { seen: [] };
    page.on('dialog', (dialog: Dialog) => {
      const expected = created.expected;
      const matches = expected !== undefined && dialog.message().includes(expected.messageContains);
      const accept = matches && expected.accept;
      created.seen.push({ type: dialog.type(), message: dialog.message(), accepted: accept, expected: matches });
      if (matches) created.expected = undefined;
      void (accept ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    });
    policies.set(page, created);
    policy = created;
  }
  return policy;
}

/** Raises SessionLostError when the page shows a login form or a permission dialog. */
export async function assertSessionAlive(page: Page, signals: SitePack['sessionLost']): Promise<void> {
  const url = page.url();
  const onLoginPage = signals.urlContains.find((fragment) => new URL(url).pathname.includes(fragment));
  if (onLoginPage) {
    throw new SessionLostError(`the vendor sent us to ${new URL(url).pathname}: the session is gone`, { url });
  }
  const text = await firstVisibleText(page, signals.texts);
  if (text !== undefined) throw new SessionLostError(`the vendor says "${text}"`, { url, text });
}

/**
 * The first of `texts` visible on the page, if any. One round trip when none
 * is (the usual case), since this runs after every navigation.
 */
export async function firstVisibleText(page: Page, texts: readonly string[]): Promise<string | undefined> {
  const [first, ...rest] = texts;
  if (first === undefined) return undefined;
  const any = rest.reduce((either, text) => either.or(page.getByText(text)), page.getByText(first));
  if (
    !(await any
      .first()
      .isVisible()
      .catch(() => false))
  )
    return undefined;
  for (const text of texts) {
    if (
      await page
        .getByText(text)
        .first()
        .isVisible()
        .catch(() => false)
    )
      return text;
  }
  return undefined;
}

export async function runStep(page: Page, step: Step, ctx: StepContext): Promise<StepResult> {
  const timeout = ctx.timeoutMs ?? 10_000;
  if (step.action === 'open') {
    const url = new URL(fillTemplate(step.url, ctx.params, 'url'), ctx.baseUrl);
    if (url.origin !== new URL(ctx.baseUrl).origin) throw new Error(`refusing to open ${url.origin}: not the configured site`);
    dialogPolicy(page);
    const response = await page.goto(url.toString(), { timeout, waitUntil: 'domcontentloaded' }).catch((error: Error) => {
      throw new ReadFailedError(`could not open ${url.pathname}: ${error.message}`, { url: url.toString() });
    });
    await assertSessionAlive(page, ctx.sessionLost);
    if (response && response.status() >= 500) {
      throw new ReadFailedError(`${url.pathname} answered ${response.status()}`, { status: response.status() });
    }
    return { page };
  }
  if (step.action === 'screenshot') {
    return { page, screenshot: { as: step.as, body: await page.screenshot({ fullPage: true }) } };
  }

  const root = await scopeRoot(page, step.within, ctx.row);
  const target = resolveLocator(root, step.target, ctx.params).first();

  switch (step.action) {
    case 'click': {
      const policy = dialogPolicy(page);
      if (step.dialog) {
        policy.expected = { accept: step.dialog.accept, messageContains: fillTemplate(step.dialog.messageContains, ctx.params) };
      }
      try {
        if (step.opensPage) {
          const [opened] = await Promise.all([page.context().waitForEvent('page', { timeout }), target.click({ timeout })]);
          await opened.waitForLoadState('domcontentloaded');
          dialogPolicy(opened);
          await assertSessionAlive(opened, ctx.sessionLost);
          return { page: opened };
        }
        await target.click({ timeout });
      } finally {
        policy.expected = undefined;
      }
      await assertSessionAlive(page, ctx.sessionLost);
      return { page };
    }
    case 'fill': {
      if (step.secret && ctx.traced) {
        throw new Error('refusing to type a secret while tracing: the trace would record it');
      }
      await target.fill(fillTemplate(step.value, ctx.params), { timeout });
      return { page };
    }
    case 'select': {
      await target.selectOption(fillTemplate(step.value, ctx.params), { timeout });
      return { page };
    }
    case 'wait_for':
    case 'expect': {
      await target.waitFor({ state: step.state, timeout: step.timeoutMs ?? timeout });
      await assertSessionAlive(page, ctx.sessionLost);
      return { page };
    }
    case 'extract': {
      if (step.mode === 'table') {
        // Native tables first; grids built from ARIA roles (a redesigned list) the same way.
        const native = await target.locator('tr').count();
        const rows = await target
          .locator(native > 0 ? 'tr' : '[role=row]')
          .evaluateAll(
            (trs, cellSelector) =>
              trs.map((tr) => Array.from(tr.querySelectorAll(cellSelector)).map((cell) => (cell.textContent ?? '').trim())),
            native > 0 ? 'th,td' : '[role=cell],[role=columnheader],[role=gridcell],[role=rowheader]',
          );
        return { page, extracted: { as: step.as, value: rows } };
      }
      return { page, extracted: { as: step.as, value: ((await target.textContent({ timeout })) ?? '').trim() } };
    }
    case 'download': {
      const [download] = await Promise.all([page.waitForEvent('download', { timeout }), target.click({ timeout })]);
      const path = await download.path();
      return { page, download: { as: step.as, suggestedName: download.suggestedFilename(), body: await readFile(path) } };
    }
  }
}

/** The dialogs a page has seen, for the evidence record. */
export function dialogsSeen(page: Page): DialogRecord[] {
  return [...(policies.get(page)?.seen ?? [])];
}

/** Forgets the dialogs a page has seen, so a reused page reports only its current task's. */
export function resetDialogPolicy(page: Page): void {
  const policy = policies.get(page);
  if (!policy) return;
  policy.seen.length = 0;
  policy.expected = undefined;
}
