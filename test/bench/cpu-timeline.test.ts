import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { RunSampler } from '../../bench/cpu-timeline.js';

/**
 * The benchmark's CPU accounting: what the machine spent during a run outside
 * the benchmark (its Node process, its Chromium tree, its sampler) is reported
 * as other processes' CPU, so a run on a busy machine says so.
 */

test('a process spinning beside a run shows up as other processes\' CPU, not as the benchmark\'s', { skip: process.platform !== 'linux' }, async () => {
  const sampler = await RunSampler.start();
  const spinner = spawn(process.execPath, ['-e', 'const end = Date.now() + 1500; while (Date.now() < end);']);
  await once(spinner, 'exit');
  const { cpu, otherCpuMs, peak } = await sampler.stop();
  assert.equal(peak.processes, 0, 'no Chromium ran under this process');
  // The spinner held a core for 1.5 s; allow for the scheduler and 10 ms clock ticks, not for it to be missed.
  assert.ok(otherCpuMs > 750, `the spinner's CPU is counted as other work (got ${otherCpuMs} ms)`);
  const ours = cpu.between(0, Number.MAX_SAFE_INTEGER);
  assert.ok(ours.nodeMs < otherCpuMs, 'the spinner is not billed to this process');
  assert.equal(ours.chromiumMs, 0);
});
