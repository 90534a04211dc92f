import type { FrameLocator, Locator as PwLocator, Page } from 'playwright-core';
import type { Locator, Scope } from '../sitepack/action-language.js';
import { fillTemplate } from '../sitepack/action-language.js';
import { StructuredContractMissingError } from '../domain/errors.js';

type Root = Page | PwLocator | FrameLocator;

/** The item a row scope refers to: rows carry `attribute`, matched against `key` as data. */
export interface RowBinding {
  attribute: string;
  key: string;
}

/**
 * Finds the row whose key attribute equals the item key. The key is compared in
 * the page as a value, never written into a selector, so a bill number such as
 * `X"] , tr[data-bill` is just a string that matches nothing.
 */
export async function locateRow(page: Page, row: RowBinding): Promise<PwLocator> {
  const rows = page.locator(`[${row.attribute}]`);
  // One round trip for both questions: are there rows at all, and which one is ours.
  const [count, index] = await rows.evaluateAll(
    (elements, [attribute, key]) => [elements.length, elements.findIndex((el) => el.getAttribute(attribute as string) === key)] as const,
    [row.attribute, row.key] as const,
  );
  if (count === 0) {
    throw new StructuredContractMissingError(`no element carries the row attribute ${row.attribute}; the page layout changed`, {
      attribute: row.attribute,
      url: page.url(),
    });
  }
  if (index < 0) {
    throw new StructuredContractMissingError(`no row with ${row.attribute} equal to the item key on this page`, {
      attribute: row.attribute,
      key: row.key,
      url: page.url(),
    });
  }
  return rows.nth(index);
}

export async function scopeRoot(page: Page, scope: Scope | undefined, row: RowBinding | undefined): Promise<Root> {
  if (!scope) return page;
  if (scope.row) {
    if (!row) throw new Error('a step scoped to the row needs the item key');
    return locateRow(page, row);
  }
  if (scope.dialog) return page.getByRole('dialog');
  if (scope.frameTitle) return locateFrameByTitle(page, scope.frameTitle);
  return page;
}

async function locateFrameByTitle(page: Page, title: string): Promise<FrameLocator> {
  const frames = page.locator('iframe');
  await frames
    .first()
    .waitFor({ state: 'attached' })
    .catch(() => undefined);
  const index = await frames.evaluateAll((elements, wanted) => elements.findIndex((el) => el.getAttribute('title') === wanted), title);
  if (index < 0) {
    throw new StructuredContractMissingError(`no iframe titled "${title}" on this page`, { frameTitle: title, url: page.url() });
  }
  return frames.nth(index).contentFrame();
}

/** Resolves a semantic locator; every text is filled from params as data. */
export function resolveLocator(root: Root, locator: Locator, params: Readonly<Record<string, string>>): PwLocator {
  const text = (value: string) => fillTemplate(value, params);
  const exact = locator.exact ?? false;
  if (locator.role) {
    return root.getByRole(locator.role, locator.name === undefined ? {} : { name: text(locator.name), exact });
  }
  if (locator.label !== undefined) return root.getByLabel(text(locator.label), { exact });
  if (locator.placeholder !== undefined) return root.getByPlaceholder(text(locator.placeholder), { exact });
  if (locator.text !== undefined) return root.getByText(text(locator.text), { exact });
  if (locator.testId !== undefined) return root.getByTestId(locator.testId);
  if (locator.field !== undefined) return root.locator(`[data-field="${locator.field}"]`);
  throw new Error('locator has no strategy');
}
