/**
 * Bundled in place of playwright-core into functions that src/contracts/functions.ts
 * declares `browser: false`. The shared services module imports the browser
 * launcher, but these functions never open a page; shipping playwright-core
 * (and its package.json lookups, which esbuild cannot bundle) would only slow
 * their cold start. A launch attempt fails loudly instead.
 */
function refuse(): never {
  throw new Error(
    `${process.env['POWERTOOLS_SERVICE_NAME'] ?? 'this function'} is deployed without a browser ` +
      '(browser: false in src/contracts/functions.ts); mark it browser: true to ship Chromium with it',
  );
}

export const chromium = { launch: refuse, launchPersistentContext: refuse, connect: refuse, connectOverCDP: refuse };
