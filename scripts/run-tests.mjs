#!/usr/bin/env node
// Finds every *.test.ts under test/ and runs them with Node's test runner.
// Node 20's --test does not expand ** globs, so the list is built here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = collect('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
// Two files at a time by default: most of an e2e file's time is spent waiting on a vendor's settle timer, a readback
// window or an approval timeout, not on the CPU, so two files share two cores well. Each file starts its own stack on
// free ports and its own data folders, so files do not share state; each browser file launches one Chromium.
// PAPERCLIP_TEST_CONCURRENCY=1 runs them one by one (for a busy machine, or to read one file's output in order).
const concurrency = Number(process.env.PAPERCLIP_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(
    `PAPERCLIP_TEST_CONCURRENCY must be a whole number of at least 1, such as 2 (got ${process.env.PAPERCLIP_TEST_CONCURRENCY})`,
  );
  process.exit(2);
}
const fileTimesReporter = new URL('./file-times-reporter.mjs', import.meta.url).href;
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${fileTimesReporter}`,
    '--test-reporter-destination=stderr',
    ...files,
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'test' },
  },
);
process.exit(result.status ?? 1);
