/** Bundled in place of @sparticuz/chromium where no browser ships; see ./playwright-core.ts. */
function refuse(): never {
  throw new Error(
    `${process.env['POWERTOOLS_SERVICE_NAME'] ?? 'this function'} is deployed without Chromium ` +
      '(browser: false in src/contracts/functions.ts)',
  );
}

export default {
  args: [] as string[],
  executablePath: async (): Promise<string> => refuse(),
};
