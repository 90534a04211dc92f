import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  APPROVAL_HTTP_FUNCTION,
  DIGEST_FUNCTION,
  SCHEDULED_BATCH_FUNCTION,
  WORKFLOW_FUNCTIONS,
  functionTimeouts,
} from '../../src/workflow/functions.js';
import { LAMBDA_MAX_TIMEOUT_S, MAX_BATCH_ITEMS, SIZING_INPUTS, deriveSizing, sizingOf, sizingTable } from '../../src/workflow/sizing.js';

/**
 * Function sizes come from one place: the measurements and the rule in
 * src/workflow/sizing.ts. The shared function list (what CDK deploys and the
 * local runner enforces) takes its numbers from there, and the table in
 * docs/deploy.md is the one the rule renders.
 */
describe('function sizing from measurement', () => {
  it("docs/deploy.md's sizing table is the one rendered from the measurements", () => {
    const docs = readFileSync('docs/deploy.md', 'utf8');
    const block = /<!-- sizing-table:[^\n]*-->\n([\s\S]*?)\n<!-- \/sizing-table -->/.exec(docs);
    assert.ok(block, 'docs/deploy.md has the sizing-table markers');
    assert.equal(block[1], sizingTable(), 'regenerate the table from sizingTable() in src/workflow/sizing.ts');
  });

  it('every function deployed or run locally has a measured row, and its memory and timeout are the derived ones', () => {
    const names = [
      ...WORKFLOW_FUNCTIONS.map((f) => f.name),
      APPROVAL_HTTP_FUNCTION.name,
      DIGEST_FUNCTION.name,
      SCHEDULED_BATCH_FUNCTION.name,
    ].sort();
    assert.deepEqual(SIZING_INPUTS.map((i) => i.name).sort(), names);
    const timeouts = functionTimeouts('p');
    for (const fn of [...WORKFLOW_FUNCTIONS, APPROVAL_HTTP_FUNCTION, DIGEST_FUNCTION, SCHEDULED_BATCH_FUNCTION]) {
      const size = sizingOf(fn.name);
      assert.equal(fn.memoryMb, size.memoryMb, fn.name);
      assert.equal(fn.timeoutSeconds, size.timeoutSeconds, fn.name);
      assert.equal(fn.browser, size.browser, fn.name);
    }
    for (const fn of WORKFLOW_FUNCTIONS) assert.equal(timeouts[`p-${fn.name}`], fn.timeoutSeconds, `local runner: ${fn.name}`);
  });

  it('follows the rule: browser functions 2,048 MB, a timeout above the need, more memory only where CPU needs it', () => {
    for (const input of SIZING_INPUTS) {
      const d = deriveSizing(input);
      if (input.browser) assert.equal(d.memoryMb, 2048, input.name);
      assert.ok(d.timeoutSeconds <= LAMBDA_MAX_TIMEOUT_S, input.name);
      if (d.fits) assert.ok(d.timeoutSeconds >= d.needSeconds, `${input.name}: ${d.timeoutSeconds} s for a need of ${d.needSeconds} s`);
    }
    // Summarize reads the whole batch: its own measured CPU and memory at scale must cover the largest batch the config
    // allows in one invocation, with the safety factor, inside Lambda's 900 s, and its memory must hold the projected peak.
    const summarize = sizingOf('summarize-batch');
    assert.equal(summarize.units, MAX_BATCH_ITEMS);
    assert.ok(summarize.fits, `summarize-batch needs ${summarize.needSeconds} s for ${MAX_BATCH_ITEMS} items`);
    assert.ok(summarize.timeoutSeconds >= summarize.needSeconds && summarize.timeoutSeconds <= LAMBDA_MAX_TIMEOUT_S);
    assert.ok(
      summarize.memoryFloorMb !== undefined && summarize.memoryMb >= summarize.memoryFloorMb,
      'memory at or above the projected peak',
    );
    assert.ok(summarize.memoryMb > 256, 'at 256 MB (0.14 vCPU) 10,000 items would not fit');
    assert.equal(sizingOf('compensate').memoryMb, 256);
  });
});
