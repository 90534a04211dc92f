import type { Frame, Page } from 'playwright-core';
import { describeFrame, type FrameSelector } from '../sitepack/action-language.js';
import { StructuredContractMissingError } from '../domain/errors.js';
import { deadline } from '../lib/deadline.js';

/**
 * Frames of a legacy portal: the top page draws the menu and an <iframe> draws the work area (the list, the item's
 * page, the dialogs). A pack names the frame by its name, title or URL; it is found in the page's frame tree (any
 * depth) through Playwright's frame objects, and the readers and the executor work in it as they do on a page.
 */

/** What a reader or a step works in: the top page or one of its frames. */
export type Surface = Page | Frame;

export function isPage(surface: Surface): surface is Page {
  return 'mainFrame' in surface;
}

/** The top page a surface belongs to (dialogs, downloads, new tabs and the session signals are the page's). */
export function topPage(surface: Surface): Page {
  return isPage(surface) ? surface : surface.page();
}

/** Path, query and hash of a frame's document. */
function pathOf(frame: Frame): string {
  try {
    const url = new URL(frame.url());
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return frame.url();
  }
}

async function titleOf(frame: Frame): Promise<string | undefined> {
  const element = await frame.frameElement().catch(() => undefined);
  if (!element) return undefined;
  try {
    return (await element.getAttribute('title')) ?? undefined;
  } finally {
    await element.dispose().catch(() => undefined);
  }
}

async function matches(frame: Frame, selector: FrameSelector): Promise<boolean> {
  if (frame.isDetached()) return false;
  if (selector.name !== undefined) return frame.name() === selector.name;
  if (selector.url !== undefined) return new RegExp(selector.url, 'u').test(pathOf(frame));
  return (await titleOf(frame)) === selector.title;
}

/** How often a frame not there yet (a portal loading its work area) is looked for again. */
const FRAME_POLL_MS = 50;

/**
 * The frame the selector names, once its document has loaded (a portal fills its work area after its own load).
 * When none matches within the time, the error lists the frames the page has, so the pack can be corrected.
 */
export async function resolveFrame(page: Page, selector: FrameSelector, timeoutMs = 10_000): Promise<Frame> {
  const limit = deadline(timeoutMs);
  for (;;) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame() || !(await matches(frame, selector))) continue;
      await frame.waitForLoadState('domcontentloaded', { timeout: Math.max(1, limit.remaining()) }).catch(() => undefined);
      if (!frame.isDetached()) return frame;
    }
    if (limit.expired) break;
    await limit.sleep(FRAME_POLL_MS);
  }
  const seen = await Promise.all(
    page
      .frames()
      .filter((frame) => frame !== page.mainFrame())
      .map(async (frame) => {
        const title = await titleOf(frame);
        return `${frame.name() ? `name ${JSON.stringify(frame.name())} ` : ''}${title ? `title ${JSON.stringify(title)} ` : ''}at ${pathOf(frame)}`;
      }),
  );
  throw new StructuredContractMissingError(
    `${describeFrame(selector)} is not on ${pathOf(page.mainFrame())} (${seen.length === 0 ? 'the page has no frames' : `its frames: ${seen.join('; ')}`})`,
    { frame: selector, url: page.url() },
  );
}

/** The surface a pack section works in: its frame when it names one, else the page. */
export async function surfaceOf(page: Page, frame: FrameSelector | undefined, timeoutMs?: number): Promise<Surface> {
  return frame ? resolveFrame(page, frame, timeoutMs) : page;
}
