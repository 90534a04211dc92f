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
  write('src/evidence/open.ts', "import { boot } from '../../twin/aws/boot.js';\nexport const open = boot;\n");
  write('twin/aws/boot.ts', 'export const boot = 1;\n');
  write('src/adapters/store.ts', "import { step } from '../app/step.js';\nexport const store = step;\n");
  // the composition root may build adapters; the app layer, and the ports it declares, may not
  write('src/app/ports/store-port.ts', 'export interface StorePort {\n  get(key: string): Promise<string>;\n}\n');
  write(
    'src/adapters/port-store.ts',
    "import type { StorePort } from '../app/ports/store-port.js';\nexport type Implements = StorePort;\n",
  );
  write('src/composition/root.ts', "import { store } from '../adapters/store.js';\nexport const root = store;\n");
  write('src/app/direct.ts', "import { store } from '../adapters/store.js';\nexport const direct = store;\n");
  write('src/app/ports/leaky.ts', "import { step } from '../step.js';\nexport const leaky = step;\n");
  write('src/app/builds.ts', "import { root } from '../composition/root.js';\nexport const builds = root;\n");
  write('lambdas/handler.ts', "import { store } from '../src/adapters/store.js';\nexport const handler = store;\n");
  write('src/contracts/tables.ts', "import { store } from '../adapters/store.js';\nexport const tables = [store];\n");
  write('src/contracts/names.ts', "import { h } from '../domain/pure.js';\nexport const names = h;\n");
  write(
    'cdk/stack.ts',
    "import { names } from '../src/contracts/names.js';\nimport { step } from '../src/app/step.js';\nexport const stack = [names, step];\n",
  );
  // product code reaches scaffolding only through one entry module per part, and only from the CLI
  write('twin/runtime/index.ts', "export { embedded } from './embedded.js';\n");
  write('twin/runtime/embedded.ts', 'export const embedded = 1;\n');
  write('src/cli/demo.ts', "import { embedded } from '../../twin/runtime/index.js';\nexport const demo = embedded;\n");
  write('src/cli/reaches-in.ts', "import { embedded } from '../../twin/runtime/embedded.js';\nexport const reachesIn = embedded;\n");
  write('lambdas/boots.ts', "import { embedded } from '../twin/runtime/index.js';\nexport const boots = embedded;\n");
  write('planner/index.ts', 'export const plan = 1;\n');
  write('src/app/plans.ts', "import { plan } from '../../planner/index.js';\nexport const plans = plan;\n");
  // the planner is a product of its own: its task store may build on an adapter, the rest of it may not
  write('planner/stores/task-store.ts', "import { store } from '../../src/adapters/store.js';\nexport const tasks = store;\n");
  write('planner/drafts.ts', "import { store } from '../src/adapters/store.js';\nexport const drafts = store;\n");
  // back offices share the kit, not each other's internals
  write('backoffices/kit/yuan.ts', 'export const yuan = 1;\n');
  write('backoffices/simulator/format.ts', "import { yuan } from '../kit/yuan.js';\nexport const format = yuan;\n");
  write(
    'backoffices/ledgerly/api.ts',
    "import { yuan } from '../kit/yuan.js';\nimport { format } from '../simulator/format.js';\nexport const api = [yuan, format];\n",
  );
});

after(() => rmSync(tree, { recursive: true, force: true }));

test('a forbidden import fails the check and names the rule and the file', () => {
  const cli = join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const run = spawnSync(
    process.execPath,
    [cli, 'src', 'lambdas', 'cdk', 'twin', 'backoffices', 'planner', '--config', join(repo, '.dependency-cruiser.mjs')],
    {
      cwd: tree,
      encoding: 'utf8',
    },
  );
  assert.notEqual(run.status, 0, 'the check exits non-zero');
  // "error RULE: FROM → TO", a package shown by its folder under node_modules
  const found = [...run.stdout.matchAll(/^\s*error ([\w-]+): (\S+) → (\S+)$/gm)]
    .map(([, rule, from, to]) => `${rule}: ${from} -> ${to!.replace(/^.*node_modules\/(@[^/]+\/[^/]+|[^/]+).*$/, '$1')}`)
    .sort();
  assert.deepEqual(found, [
    'adapters-do-not-import-app: src/adapters/store.ts -> src/app/step.ts',
    'adapters-only-from-the-composition-root: lambdas/handler.ts -> src/adapters/store.ts',
    'adapters-only-from-the-composition-root: planner/drafts.ts -> src/adapters/store.ts',
    'adapters-only-from-the-composition-root: src/app/direct.ts -> src/adapters/store.ts',
    'adapters-only-from-the-composition-root: src/contracts/tables.ts -> src/adapters/store.ts',
    'app-does-not-compose: src/app/builds.ts -> src/composition/root.ts',
    'app-drives-no-browser: src/app/click.ts -> playwright-core',
    'app-talks-to-ports: src/app/poll.ts -> @aws-sdk/client-sfn',
    'back-offices-share-only-the-kit: backoffices/ledgerly/api.ts -> backoffices/simulator/format.ts',
    'cdk-reads-only-shared-contracts: cdk/stack.ts -> src/app/step.ts',
    'contracts-load-nothing-that-runs: src/contracts/tables.ts -> src/adapters/store.ts',
    'domain-is-platform-free: src/domain/rule.ts -> @aws-sdk/client-s3',
    'evidence-boots-no-stack: src/evidence/open.ts -> twin/aws/boot.ts',
    'lambdas-only-call-the-app-layer: lambdas/handler.ts -> src/adapters/store.ts',
    'only-the-cli-starts-scaffolding: lambdas/boots.ts -> twin/runtime/index.ts',
    'only-the-cli-starts-scaffolding: src/app/plans.ts -> planner/index.ts',
    'only-the-cli-starts-scaffolding: src/evidence/open.ts -> twin/aws/boot.ts',
    'ports-only-declare: src/app/ports/leaky.ts -> src/app/step.ts',
    'product-reaches-scaffolding-through-entry-points: src/cli/reaches-in.ts -> twin/runtime/embedded.ts',
    'product-reaches-scaffolding-through-entry-points: src/evidence/open.ts -> twin/aws/boot.ts',
  ]);
});
