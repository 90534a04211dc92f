import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs a bench module's measurement when the module is the script node was started with
 * (`npx tsx bench/<module>.ts [args]`), prints its report as JSON on stdout and exits 0, or 1 on
 * an error; imported by the bench or a test, it does nothing. `cleanup` runs either way.
 */
export function runStandalone(
  moduleUrl: string,
  measure: (args: string[]) => Promise<unknown>,
  cleanup: () => Promise<void> = async () => undefined,
): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  measure(process.argv.slice(2)).then(
    async (report) => {
      console.log(JSON.stringify(report, null, 2));
      await cleanup();
      process.exit(0);
    },
    async (error: unknown) => {
      console.error(error);
      await cleanup();
      process.exit(1);
    },
  );
}
