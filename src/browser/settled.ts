import type { Page } from 'playwright-core';
import { SessionLostError } from '../domain/errors.js';
import { fillTemplate, type Locator, type Scope } from '../sitepack/action-language.js';
import type { SiteAction } from '../sitepack/schema.js';
import { runSteps, type StepContext } from './executor.js';
import { resolveLocator, scopeRoot } from './locate.js';
import { rowCellShowsQuietly } from './page-reading.js';
import { deadline } from '../lib/deadline.js';

/** The settled state a browser write waits for before its "after" picture (`tiers.browser.settled` of an action). */
export type Settled = NonNullable<NonNullable<SiteAction['tiers']['browser']>['settled']>;

/** Whether a locator shows now (after a short wait for a page that renders late): a stage's `done` check. */
export async function shows(page: Page, check: { target: Locator; within?: Scope }, ctx: StepContext): Promise<boolean> {
  const root = await scopeRoot(page, check.within, ctx.row, 2000, ctx.params, { frame: ctx.frame }).catch(() => undefined);
  if (!root) return false;
  return resolveLocator(root, check.target, ctx.params)
    .first()
    .waitFor({ state: 'visible', timeout: 2000 })
    .then(() => true)
    .catch(() => false);
}

/**
 * Waits for the page to show the write's settled state before the "after"
 * picture, so the evidence never pairs a success toast with a stale or interim
 * status. With `steps`, the page is opened again (read-only steps) until it
 * shows the settled state: a page that does not refresh by itself would
 * otherwise keep the interim status forever. A page that does not settle is
 * still pictured as it then is: readback, not the page, decides.
 */
export async function settled(page: Page, condition: Settled, ctx: StepContext): Promise<{ page: Page; settled: boolean }> {
  // One budget for the whole wait: the page opened again, the scope found and the target waited for all spend from it.
  const limit = deadline(condition.timeoutMs);
  let current = page;
  for (;;) {
    try {
      if (condition.steps) current = (await runSteps(current, condition.steps, ctx)).page;
      if (await settledQuietly(current, condition, ctx)) return { page: current, settled: true };
      const wait = Math.max(100, condition.steps ? Math.min(1000, limit.remaining()) : limit.remaining());
      const root = await scopeRoot(current, condition.within, ctx.row, wait, ctx.params, {
        present: condition.state !== 'hidden',
        frame: ctx.frame,
      });
      await resolveLocator(root, condition.target, ctx.params).first().waitFor({ state: condition.state, timeout: wait });
      return { page: current, settled: true };
    } catch (error) {
      // Only a lost session matters here; anything else just means "not settled yet".
      if (error instanceof SessionLostError) throw error;
    }
    if (!condition.steps || limit.expired) return { page: current, settled: false };
    await limit.sleep(250);
  }
}

/** A settled text in the item's row, seen without a Playwright call; anything else is left to the locators. */
async function settledQuietly(page: Page, condition: Settled, ctx: StepContext): Promise<boolean> {
  const { target } = condition;
  if (ctx.frame || !condition.within?.row || !ctx.row || condition.state !== 'visible' || target.text === undefined) return false;
  const text = fillTemplate(target.text, ctx.params);
  return (await rowCellShowsQuietly(page, ctx.row, text, target.exact ?? false).catch(() => undefined)) === true;
}
