import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers.js';

/**
 * The drill as an operator runs it: its own simulator, embedded stack and
 * browser in a child process (so this file starts no browser of its own).
 */
describe('paperclip drill', () => {
  test('executes and undoes one write on the embedded stack, prints the result, exits 0', async () => {
    const run = await runCli(['drill', '--tenant', 'acme']);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.equal(result.drill, 'passed');
    assert.equal(result.tenant, 'acme');
    assert.equal(result.before, 'PENDING');
    assert.equal(result.afterWrite, 'PROCESSED');
    assert.equal(result.after, 'PENDING');
    assert.equal(result.restored, true);
    assert.equal(result.compensation.rolledBack, true);
    assert.match(run.stderr, /approval pages/, 'started like npm start');
  });

  test('bad arguments are refused before anything starts', async () => {
    const run = await runCli(['drill', '--tenant', 'ACME!']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--tenant.*lower-kebab-case/);
  });
});
