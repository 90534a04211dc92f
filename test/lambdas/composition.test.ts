import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * A handler gets its services from services() (src/app/services.ts), which the composition root's Lambda module
 * provides. A Lambda entry point that does not import it would fail its first invocation on AWS with "no services
 * here"; the embedded stack sets its own services and would not notice, so this is checked here.
 */
test('every Lambda entry point imports the composition root first', () => {
  const missing = readdirSync('lambdas')
    .filter((name) => name.endsWith('.ts'))
    .filter((name) => !readFileSync(join('lambdas', name), 'utf8').startsWith("import '../src/composition/lambda.js';\n"));
  assert.deepEqual(missing, [], "start each with import '../src/composition/lambda.js';");
});

test('services() without the composition root names the import that is missing', async () => {
  const { services } = await import('../../src/app/services.js');
  assert.throws(() => services(), /src\/composition\/lambda\.ts/);
});
