import { chromiumPids, readProcStat, treeMemory, type TreeMemory } from './browser-memory.js';
import { clockTicks } from './machine.js';

/**
 * Runs in a process of its own, forked by `RunSampler` (cpu-timeline.ts): reads the
 * Chromium tree under the benchmark process from /proc. Done in the benchmark
 * process itself, these synchronous reads of every thread's children list and
 * every renderer's smaps_rollup blocked its event loop (the path being
 * measured) and were counted as Paperclip's CPU.
 *
 * The forked AWS emulators (`emulatorsPid`) are a child of the benchmark too, but a
 * Node process: the tree walk keeps only processes named like Chromium, so they are
 * never counted as the browser; their CPU is read here on its own.
 *
 * Messages in: { root, cpuIntervalMs, memoryIntervalMs, rescanMs, emulatorsPid? }, then 'stop'.
 * Message out, on stop: { cpu: [{ at, chromiumMs, emulatorsMs }], peak: TreeMemory & { samples }, ownCpuMs }, where
 * ownCpuMs is what this sampler itself used while sampling (the benchmark subtracts it from the machine's CPU).
 */

interface StartMessage {
  root: number;
  cpuIntervalMs: number;
  memoryIntervalMs: number;
  rescanMs: number;
  emulatorsPid?: number;
}

/** utime + stime + cutime + cstime of one process, in ms (reaped renderers count in their parent). */
function processCpuMs(pid: number): number {
  const fields = readProcStat(pid)?.fields ?? [];
  const ticks = [11, 12, 13, 14].reduce((t, i) => t + Number(fields[i] ?? 0), 0);
  return (ticks * 1000) / clockTicks();
}

function run(start: StartMessage): void {
  const ownAtStart = process.cpuUsage();
  const cpu: Array<{ at: number; chromiumMs: number; emulatorsMs: number }> = [];
  let peak: TreeMemory = { processes: 0, rssMiB: 0, pssMiB: 0 };
  let memorySamples = 0;
  let pids = chromiumPids(start.root);
  let scannedAt = Date.now();

  const sampleCpu = () => {
    // Walking the tree is the expensive part; a renderer found late still reports its whole cumulative CPU.
    if (Date.now() - scannedAt >= start.rescanMs) {
      pids = chromiumPids(start.root);
      scannedAt = Date.now();
    }
    let chromiumMs = 0;
    for (const pid of pids) chromiumMs += processCpuMs(pid);
    // A cumulative counter: once the emulators have exited their stat reads 0, so keep the last reading.
    const emulatorsMs = start.emulatorsPid === undefined ? 0 : Math.max(processCpuMs(start.emulatorsPid), cpu.at(-1)?.emulatorsMs ?? 0);
    cpu.push({ at: Date.now(), chromiumMs, emulatorsMs });
  };
  const sampleMemory = () => {
    const now = treeMemory(start.root);
    memorySamples += 1;
    peak = {
      processes: Math.max(peak.processes, now.processes),
      rssMiB: Math.max(peak.rssMiB, now.rssMiB),
      pssMiB: Math.max(peak.pssMiB, now.pssMiB),
    };
  };

  sampleCpu();
  sampleMemory();
  const cpuTimer = setInterval(sampleCpu, start.cpuIntervalMs);
  const memoryTimer = setInterval(sampleMemory, start.memoryIntervalMs);
  process.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(cpuTimer);
    clearInterval(memoryTimer);
    pids = chromiumPids(start.root);
    sampleCpu();
    sampleMemory();
    const own = process.cpuUsage(ownAtStart);
    process.send?.({ cpu, peak: { ...peak, samples: memorySamples }, ownCpuMs: (own.user + own.system) / 1000 }, () => process.exit(0));
  });
}

process.once('message', (message) => run(message as StartMessage));
// The benchmark died or was stopped without asking: do not sample an orphaned tree forever.
process.once('disconnect', () => process.exit(0));
process.send?.('ready');
