import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runNode } from '../support/processes.js';

/**
 * `paperclip audit verify` (like report, items and takeover) reads the stores and the bucket; it starts no stack, no
 * back office, no planner and no browser, so it loads none of their modules either: those are loaded by the commands
 * that start them (demo, run, a data folder nobody holds, plan) when they do. Every command used to load them all,
 * which made each command start take seconds of module loading before it read anything.
 */
test('audit verify loads no embedded runtime, back office, planner or Playwright', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-loads-'));
  try {
    const record = join(dir, 'loads.txt');
    const run = await runNode(
      ['--import', 'tsx', '--import', resolve('test/support/record-loads.mjs'), 'src/cli/main.ts', 'audit', 'verify', '--help'],
      { PAPERCLIP_RECORD_LOADS: record },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /audit verify/);
    const loaded = readFileSync(record, 'utf8').split('\n').filter(Boolean);
    assert.ok(
      loaded.some((url) => url.includes('/src/evidence/verify.ts')),
      'the hook sees the modules the command loads',
    );
    const root = new URL(`file://${resolve('.')}/`).href;
    const own = loaded.filter((url) => url.startsWith(root) && !url.includes('/node_modules/')).map((url) => url.slice(root.length));
    assert.deepEqual(
      own.filter((path) => /^(twin|backoffices|planner)\//.test(path)),
      [],
      'no scaffolding and no planner',
    );
    assert.deepEqual(
      loaded.filter((url) => url.includes('/node_modules/playwright-core/')),
      [],
      'no Playwright',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
