import type { Frame, Page } from 'playwright-core';
import { AmbiguousOutcomeError, WriteNotCommittedError } from '../domain/errors.js';
import type { SitePack } from '../sitepack/schema.js';
import { firstVisibleText } from './executor.js';
import { resolveLocator } from './locate.js';
import type { Surface } from './frames.js';

/**
 * Reads the page's own feedback after the commit click. It is never the
 * verdict: it only tells readback whether the vendor refused outright or the
 * request timed out, which decides whether a settled negative readback may be
 * followed by another attempt.
 */
export async function throwOnWriteFeedback(surface: Surface, feedback: SitePack['writeFeedback']): Promise<void> {
  // A frame-scoped action's toasts are drawn in its frame (a portal's work area), not on the top page.
  const page: Page | Frame = surface;
  const { rejected, timedOut, accepted, locator, timeoutMs } = feedback;
  // The answer shows up once the vendor replies: a live region, the pack's locator, or one of its known texts
  // (many admin UIs show toasts with no ARIA role). Give a slow page a moment, never longer than the pack says.
  const texts = [...accepted, ...rejected, ...timedOut];
  const answer = [...(locator ? [resolveLocator(page, locator, {})] : []), ...texts.map((text) => page.getByText(text))].reduce(
    (either, next) => either.or(next),
    page.getByRole('alert').or(page.getByRole('status')),
  );
  await answer
    .first()
    .waitFor({ state: 'visible', timeout: timeoutMs })
    .catch(() => undefined);
  const text = await firstVisibleText(surface, [...rejected, ...timedOut]);
  if (text === undefined) return;
  if (rejected.includes(text)) {
    throw new WriteNotCommittedError(`the vendor answered "${(await page.getByText(text).first().textContent())?.trim()}"`);
  }
  throw new AmbiguousOutcomeError(`the vendor did not answer in time ("${text}"); the write may have landed`);
}
