import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TreeMemory } from './browser-memory.js';
import { machineBusyMs } from './machine.js';

/**
 * CPU time consumed while the benchmark runs, sampled over time so it can be
 * attributed to any window afterwards (an item, a step, a Lambda invocation).
 * On a loaded machine wall time mostly measures waiting for a core; CPU time
 * measures the work, which is what a dedicated Lambda vCPU would have to do.
 *
 * Two parts: this Node process (Paperclip's handlers and Playwright client,
 * but also the simulator and the Step Functions runner, so an upper bound for
 * the handlers' own share), sampled here with `process.cpuUsage()`, which
 * costs nothing measurable; and the Chromium tree (every Chromium process
 * under this one, with the CPU of exited children their parent reaped),
 * sampled from /proc by a separate process so that the sampling neither
 * blocks nor is billed to the path it measures. Beside them, when a run has
 * its AWS emulators in a forked process, that process's CPU, sampled with the
 * Chromium tree: on AWS it is DynamoDB's, S3's and SES's work, not Lambda's,
 * so it is in neither part nor in the total.
 */

export interface CpuSplit {
  nodeMs: number;
  chromiumMs: number;
  /** nodeMs + chromiumMs: the forked emulators are not in it. */
  totalMs: number;
  /** The forked AWS emulators' process (0 when the run had none). */
  emulatorsMs: number;
}

interface Point {
  at: number;
  ms: number;
}

function valueAt(series: readonly Point[], at: number): number {
  if (series.length === 0) return 0;
  if (at <= series[0]!.at) return series[0]!.ms;
  if (at >= series[series.length - 1]!.at) return series[series.length - 1]!.ms;
  let lo = 0;
  let hi = series.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (series[mid]!.at <= at) lo = mid;
    else hi = mid;
  }
  const a = series[lo]!;
  const b = series[hi]!;
  const f = b.at === a.at ? 0 : (at - a.at) / (b.at - a.at);
  return a.ms + (b.ms - a.ms) * f;
}

export class CpuTimeline {
  constructor(
    private readonly node: readonly Point[],
    private readonly chromium: readonly Point[],
    private readonly emulators: readonly Point[] = [],
  ) {}

  /** CPU used between two wall-clock times (ms since the epoch), interpolated between samples. */
  between(start: number, end: number): CpuSplit {
    const nodeMs = Math.max(0, valueAt(this.node, end) - valueAt(this.node, start));
    const chromiumMs = Math.max(0, valueAt(this.chromium, end) - valueAt(this.chromium, start));
    const emulatorsMs = Math.max(0, valueAt(this.emulators, end) - valueAt(this.emulators, start));
    return { nodeMs, chromiumMs, totalMs: nodeMs + chromiumMs, emulatorsMs };
  }
}

export interface SampledRun {
  cpu: CpuTimeline;
  /** Peak memory of the Chromium tree during the run. */
  peak: TreeMemory & { samples: number };
  /**
   * CPU the rest of the machine used during the run: every core's busy time
   * minus this process, its Chromium tree, the forked emulators and the sampler. Zero on a quiet
   * machine; large when other work competed for the cores (NaN off Linux).
   */
  otherCpuMs: number;
}

const CHILD = fileURLToPath(new URL('./chromium-sampler-process.ts', import.meta.url));

/**
 * Samples CPU (every 50 ms) and the browser tree's peak memory (every 250 ms) from start to stop;
 * `emulatorsPid`: the forked AWS emulators' process, sampled apart (it is a child of this process
 * but not Chromium, so the tree walk never counts it as the browser).
 */
export class RunSampler {
  private readonly node: Point[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly machineAtStart = machineBusyMs();

  private constructor(private readonly child: ChildProcess) {
    this.sampleNode();
    this.timer = setInterval(() => this.sampleNode(), 50);
    this.timer.unref();
  }

  static async start(options: { emulatorsPid?: number } = {}): Promise<RunSampler> {
    const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the CPU sampler exited with code ${code} before it started`)));
      child.once('message', () => resolve());
    });
    child.removeAllListeners('exit');
    child.send({
      root: process.pid,
      cpuIntervalMs: 50,
      memoryIntervalMs: 250,
      rescanMs: 250,
      ...(options.emulatorsPid !== undefined ? { emulatorsPid: options.emulatorsPid } : {}),
    });
    // A run that throws before stop() must not be kept alive by its sampler; the sampler exits when we do.
    child.unref();
    child.channel?.unref();
    return new RunSampler(child);
  }

  private sampleNode(): void {
    const usage = process.cpuUsage();
    this.node.push({ at: Date.now(), ms: (usage.user + usage.system) / 1000 });
  }

  async stop(): Promise<SampledRun> {
    clearInterval(this.timer);
    this.sampleNode();
    const machine = machineBusyMs() - this.machineAtStart;
    this.child.ref();
    this.child.channel?.ref();
    const result = await new Promise<{
      cpu: Array<{ at: number; chromiumMs: number; emulatorsMs: number }>;
      peak: TreeMemory & { samples: number };
      ownCpuMs: number;
    }>((resolve, reject) => {
      this.child.once('message', (message) => resolve(message as never));
      this.child.once('exit', (code) => reject(new Error(`the CPU sampler exited with code ${code} before it reported`)));
      this.child.send('stop');
    });
    const cpu = new CpuTimeline(
      this.node,
      result.cpu.map((s) => ({ at: s.at, ms: s.chromiumMs })),
      result.cpu.map((s) => ({ at: s.at, ms: s.emulatorsMs })),
    );
    const whole = cpu.between(this.node[0]!.at, this.node[this.node.length - 1]!.at);
    const ours = whole.totalMs + whole.emulatorsMs + result.ownCpuMs;
    // /proc/stat counts in clock ticks (10 ms): a small negative remainder is rounding, not a measurement.
    return { cpu, peak: result.peak, otherCpuMs: Math.max(0, machine - ours) };
  }
}
