#!/usr/bin/env node
// Fails on source lines longer than MAX characters in the folders below. Biome's formatter wraps code at
// 140, but it cannot break a long string, template or regular expression; this check catches those.
//
// ALLOWED lists the files that still have long lines and how many. The list can only shrink: a file with
// more long lines than allowed fails, and so does a file with fewer (lower its number, or drop it at 0),
// so every shortened line stays shortened. Never add a file or raise a number here: shorten the line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MAX = 160;
const FOLDERS = ['src', 'lambdas', 'cdk', 'twin', 'backoffices', 'planner', 'bench', 'test', 'scripts'];
const SOURCE = /\.(ts|mts|js|mjs|cjs)$/;

/** file -> how many lines over MAX it may still have (only ever lowered). */
const ALLOWED = {
  'bench/analysis.ts': 26,
  'bench/cost-model.ts': 1,
  'bench/report-markdown.ts': 6,
  'src/approval-server/pages.ts': 6,
  'src/evidence/batch-page.ts': 5,
  'src/evidence/html.ts': 1,
  'src/evidence/item-page.ts': 7,
  'src/evidence/server.ts': 1,
  'backoffices/ledgerly/web/app.js': 1,
  'planner/prompt.ts': 4,
  'src/report/render-html.ts': 10,
  'backoffices/simulator/pages/layout.ts': 4,
  'backoffices/simulator/pages/list.ts': 5,
  'backoffices/simulator/pages/refund.ts': 1,
  'test/cli/run.test.ts': 1,
  'test/cli/sitepack.test.ts': 2,
  'test/e2e/ledgerly.test.ts': 2,
  'test/backoffices/ledgerly/app.test.ts': 1,
  'test/sitepack/fixtures.ts': 9,
};

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'cdk.out') return [];
    if (statSync(path).isDirectory()) return collect(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

const problems = [];
for (const file of FOLDERS.flatMap(collect).sort()) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const long = lines.flatMap((line, i) => (line.length > MAX ? [i + 1] : []));
  const allowed = ALLOWED[file] ?? 0;
  if (long.length > allowed) {
    const where = long.map((n) => `${file}:${n}`).join(', ');
    problems.push(`${where}: longer than ${MAX} characters (${long.length} such lines, ${allowed} allowed); break the line`);
  } else if (long.length < allowed) {
    problems.push(
      `${file}: ${long.length} lines over ${MAX} characters but ${allowed} allowed; lower its ALLOWED number to ${long.length}`,
    );
  }
}
for (const file of Object.keys(ALLOWED)) {
  try {
    statSync(file);
  } catch {
    problems.push(`${file}: listed in ALLOWED but gone; remove it from the list`);
  }
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`line length: no line over ${MAX} characters beyond the allow-list`);
