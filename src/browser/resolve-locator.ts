import type { Frame, FrameLocator, Locator as PwLocator, Page } from 'playwright-core';
import type { Locator } from '../sitepack/action-language.js';
import { fillTemplate } from '../sitepack/action-language.js';

export type Root = Page | Frame | PwLocator | FrameLocator;

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
  throw new Error('locator has no strategy');
}
