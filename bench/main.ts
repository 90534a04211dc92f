import { writeFileSync } from 'node:fs';
import { ValidationError } from '../src/config/errors.js';
import { parseBenchArgs } from './args.js';
import { renderMarkdown } from './report-markdown.js';
import { runBenchmark } from './run-bench.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
// The deployed browser functions run without source-mapped stacks (cdk/lib/paperclip-function.ts says why): every path
// is measured that way, rather than with the TypeScript loader mapping each stack Playwright reads.
process.setSourceMapsEnabled(false);

const USAGE =
  'usage: npm run bench -- [--items N] [--concurrency 1,2,4] [--repeat R] [--tracing on|off|both] [--settle-ms MS]' +
  ' [--summarize-items N] [--out BENCHMARKS.md] [--json FILE]';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  let flags: ReturnType<typeof parseBenchArgs>;
  try {
    flags = parseBenchArgs(argv);
  } catch (error) {
    console.error((error as Error).message);
    console.error(USAGE);
    return error instanceof ValidationError || error instanceof Error ? 2 : 1;
  }
  const command = ['npm run bench --', ...process.argv.slice(2)].join(' ');
  const report = await runBenchmark({
    items: flags.items,
    concurrency: flags.concurrency,
    repeat: flags.repeat,
    tracing: flags.tracing,
    settleMs: flags['settle-ms'],
    summarizeItems: flags['summarize-items'],
    command: process.argv.length > 2 ? command : 'npm run bench',
    log: (line) => console.error(`[bench] ${line}`),
  });
  writeFileSync(flags.out, renderMarkdown(report));
  if (flags.json) writeFileSync(flags.json, JSON.stringify(report, null, 2));
  const missed = report.targets.filter((t) => t.met === false).map((t) => t.target);
  console.log(
    JSON.stringify({
      out: flags.out,
      ratio: report.latency.ratioMedian,
      targetsMissed: missed.length,
      costPer1000: Object.fromEntries(Object.entries(report.cost.baseline).map(([k, v]) => [k, Number(v!.total.toFixed(4))])),
    }),
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
