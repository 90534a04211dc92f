import type { ElementHandle, Locator } from 'playwright-core';

/**
 * The "load more" button of a long list: found by the pack's locator once, then checked and pressed through
 * the element itself. Every use of a role locator resolves it again, and resolving walks the whole page
 * computing roles and accessible names: on a list grown to 10,000 rows that is most of a second, and a press
 * used it three times (visible? enabled? click), so reading a list by load more cost O(rows²) in the reader
 * itself (bench/load-more-scale.ts, 10,000 rows in presses of 100: 306 s before, 168 s now). It is looked up again
 * only when the page has replaced it (a redraw that re-creates the button) or removed it (the list is complete).
 */
export class LoadMoreButton {
  private element: ElementHandle<Node> | undefined;

  constructor(private readonly locator: Locator) {}

  /** Whether the page shows the button and it can be pressed (a removed, hidden or disabled button ends the list). */
  async usable(): Promise<boolean> {
    const element = await this.current();
    if (!element) return false;
    return (await element.isVisible().catch(() => false)) && (await element.isEnabled().catch(() => false));
  }

  /** Presses the button; `usable()` said it can be. */
  async press(): Promise<void> {
    const element = await this.current();
    if (element) {
      try {
        await element.click();
        return;
      } catch (error) {
        // Only a button the page replaced in the meantime is pressed again, found anew; any other failure is the press's.
        if (await element.evaluate((node) => node.isConnected).catch(() => false)) throw error;
      }
    }
    await this.dispose();
    await this.locator.click();
  }

  /** Lets go of the element (the page keeps it alive for the handle otherwise). */
  async dispose(): Promise<void> {
    await this.element?.dispose().catch(() => undefined);
    this.element = undefined;
  }

  private async current(): Promise<ElementHandle<Node> | undefined> {
    if (this.element && (await this.element.evaluate((node) => node.isConnected).catch(() => false))) return this.element;
    await this.dispose();
    // count() does not wait: a list without the button (complete, or never longer than one press) answers at once.
    if ((await this.locator.count().catch(() => 0)) === 0) return undefined;
    this.element = (await this.locator.elementHandle({ timeout: 1_000 }).catch(() => null)) ?? undefined;
    return this.element;
  }
}
