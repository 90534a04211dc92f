import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { RunSampler } from '../../bench/cpu-timeline.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The benchmark's CPU accounting: what the machine spent during a run outside
 * the benchmark (its Node process, its Chromium tree, its sampler) is reported
 * as other processes' CPU, so a run on a busy machine says so.
 */

/**
 * A child that spins until it has used 1.5 s of CPU, counted by its own clock rather than the wall's: on a busy
 * machine a wall-clock spin may get a fraction of a core, and the sampler would rightly see less.
 */
const SPIN_1500_MS_OF_CPU = 'while (process.cpuUsage().user + process.cpuUsage().system < 1_500_000);';

test("a process spinning beside a run shows up as other processes' CPU, not as the benchmark's", {
  skip: process.platform !== 'linux',
}, async () => {
  const sampler = await RunSampler.start();
  const spinner = spawn(process.execPath, ['-e', SPIN_1500_MS_OF_CPU]);
  await once(spinner, 'exit');
  const { cpu, otherCpuMs, peak } = await sampler.stop();
  assert.equal(peak.processes, 0, 'no Chromium ran under this process');
  // The spinner used 1.5 s of CPU; allow for the scheduler and 10 ms clock ticks, not for it to be missed.
  assert.ok(otherCpuMs > 750, `the spinner's CPU is counted as other work (got ${otherCpuMs} ms)`);
  const ours = cpu.between(0, Number.MAX_SAFE_INTEGER);
  assert.ok(ours.nodeMs < otherCpuMs, 'the spinner is not billed to this process');
  assert.equal(ours.chromiumMs, 0);
});

test("the forked emulators' CPU is sampled apart: neither Chromium's nor this process's", {
  skip: process.platform !== 'linux',
}, async () => {
  // A Node child like the forked emulators (not named like Chromium), spinning only once the sampler runs.
  const emulators = spawn(process.execPath, ['-e', `process.stdin.once('data', () => { ${SPIN_1500_MS_OF_CPU} process.exit(0); });`], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const sampler = await RunSampler.start({ emulatorsPid: emulators.pid! });
  emulators.stdin.write('go\n');
  await once(emulators, 'exit');
  const { cpu } = await sampler.stop();
  const whole = cpu.between(0, Number.MAX_SAFE_INTEGER);
  assert.ok(whole.emulatorsMs > 750, `the emulators' spin is counted as theirs (got ${whole.emulatorsMs} ms)`);
  assert.equal(whole.chromiumMs, 0, 'a Node child under the benchmark is not Chromium');
  assert.ok(whole.nodeMs < whole.emulatorsMs, 'the spin is not billed to this process');
  assert.equal(whole.totalMs, whole.nodeMs + whole.chromiumMs, "the total leaves the emulators' CPU out");
});

test('a benchmark that ends without stopping its sampler exits, and takes the sampler with it', {
  skip: process.platform !== 'linux',
  timeout: 60_000,
}, async () => {
  // Prints the sampler's pid (this process's only child) and ends without calling stop().
  const script = [
    "const { RunSampler } = await import('./bench/cpu-timeline.ts');",
    "const { readdirSync, readFileSync } = await import('node:fs');",
    'await RunSampler.start();',
    "const tasks = readdirSync('/proc/self/task');",
    "console.log(tasks.map((t) => readFileSync(`/proc/self/task/${t}/children`, 'utf8')).join(' ').trim());",
  ].join('\n');
  const run = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  run.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(run, 'exit')) as [number | null];
  assert.equal(code, 0, 'the started sampler did not keep the benchmark process alive');
  const samplers = out.trim().split(/\s+/).filter(Boolean);
  assert.ok(samplers.length > 0, 'the sampler process was found while the benchmark ran');
  const alive = () => samplers.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
  // The sampler notices its parent is gone when the IPC channel closes; give it a moment, never forever.
  for (let i = 0; i < 50 && alive().length > 0; i++) await sleep(100);
  const survivors = alive();
  // A regression must fail, not leave a sampler holding this test's output open.
  for (const pid of survivors) process.kill(Number(pid));
  assert.deepEqual(survivors, [], 'no sampler process outlives the benchmark');
});
