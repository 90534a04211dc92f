import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';

/**
 * The import rules (.dependency-cruiser.mjs) run on a small tree laid out like the project's, so a broken rule
 * is shown to fail the check without touching the real source folders.
 */
const repo = resolve('.');
let tree: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(join(tree, path)), { recursive: true });
  writeFileSync(join(tree, path), text);
}

before(() => {
  tree = mkdtempSync(join(tmpdir(), 'import-rules-'));
  symlinkSync(join(repo, 'node_modules'), join(tree, 'node_modules'), 'dir');
  write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  write('package.json', JSON.stringify({ type: 'module' }));
  write('src/domain/rule.ts', "import type { S3Client } from '@aws-sdk/client-s3';\nexport type Uses = S3Client;\n");
  write('src/domain/pure.ts', "import { createHash } from 'node:crypto';\nexport const h = createHash;\n");
  write('src/app/step.ts', "import { h } from '../domain/pure.js';\nexport const step = h;\n");
  write('src/app/click.ts', "import type { Page } from 'playwright-core';\nexport type Clicks = Page;\n");
  write('src/app/poll.ts', "import { SFNClient } from '@aws-sdk/client-sfn';\nexport const poll = new SFNClient({});\n");
  write('src/evidence/open.ts', "import { boot } from '../local/boot.js';\nexport const open = boot;\n");
  write('src/local/boot.ts', 'export const boot = 1;\n');
  write('src/adapters/store.ts', "import { step } from '../app/step.js';\nexport const store = step;\n");
  write('lambdas/handler.ts', "import { store } from '../src/adapters/store.js';\nexport const handler = store;\n");
});

after(() => rmSync(tree, { recursive: true, force: true }));

test('a forbidden import fails the check and names the rule and the file', () => {
  const cli = join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const run = spawnSync(process.execPath, [cli, 'src', 'lambdas', '--config', join(repo, '.dependency-cruiser.mjs')], {
    cwd: tree,
    encoding: 'utf8',
  });
  assert.notEqual(run.status, 0, 'the check exits non-zero');
  // "error RULE: FROM → TO", a package shown by its folder under node_modules
  const found = [...run.stdout.matchAll(/^\s*error ([\w-]+): (\S+) → (\S+)$/gm)]
    .map(([, rule, from, to]) => `${rule}: ${from} -> ${to!.replace(/^.*node_modules\/(@[^/]+\/[^/]+|[^/]+).*$/, '$1')}`)
    .sort();
  assert.deepEqual(found, [
    'adapters-do-not-import-app: src/adapters/store.ts -> src/app/step.ts',
    'app-drives-no-browser: src/app/click.ts -> playwright-core',
    'app-talks-to-ports: src/app/poll.ts -> @aws-sdk/client-sfn',
    'domain-is-platform-free: src/domain/rule.ts -> @aws-sdk/client-s3',
    'evidence-boots-no-stack: src/evidence/open.ts -> src/local/boot.ts',
    'lambdas-only-call-the-app-layer: lambdas/handler.ts -> src/adapters/store.ts',
  ]);
});
