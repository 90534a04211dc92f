import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chromiumPids } from './browser-memory.js';

/**
 * CPU time consumed while the benchmark runs, sampled over time so it can be
 * attributed to any window afterwards (an item, a step, a Lambda invocation).
 * On a loaded machine wall time mostly measures waiting for a core; CPU time
 * measures the work, which is what a dedicated Lambda vCPU would have to do.
 *
 * Two parts: this Node process (Paperclip's handlers and Playwright client,
 * but also the simulator, dynalite, s3rver and the Step Functions runner, so
 * an upper bound for the handler's own share) and the Chromium tree (every
 * process under this one, with the CPU of exited children their parent reaped).
 */

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime + cutime + cstime of one process, in ms. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    const ticks = [11, 12, 13, 14].reduce((t, i) => t + Number(fields[i] ?? 0), 0);
    return (ticks * 1000) / clockTicks();
  } catch {
    return 0;
  }
}

export interface CpuSample {
  at: number;
  nodeMs: number;
  chromiumMs: number;
}

export interface CpuSplit {
  nodeMs: number;
  chromiumMs: number;
  totalMs: number;
}

export class CpuTimeline {
  private readonly samples: CpuSample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 50) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): this {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    return this;
  }

  private sample(): void {
    const usage = process.cpuUsage();
    // An exited renderer's time moves into its parent's cutime/cstime when the parent reaps it, so summing live processes stays continuous.
    let chromium = 0;
    for (const pid of chromiumPids()) chromium += processCpuMs(pid);
    this.samples.push({ at: Date.now(), nodeMs: (usage.user + usage.system) / 1000, chromiumMs: chromium });
  }

  private valueAt(at: number): CpuSample {
    const s = this.samples;
    if (s.length === 0) return { at, nodeMs: 0, chromiumMs: 0 };
    if (at <= s[0]!.at) return s[0]!;
    if (at >= s[s.length - 1]!.at) return s[s.length - 1]!;
    let lo = 0;
    let hi = s.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (s[mid]!.at <= at) lo = mid;
      else hi = mid;
    }
    const a = s[lo]!;
    const b = s[hi]!;
    const f = b.at === a.at ? 0 : (at - a.at) / (b.at - a.at);
    return { at, nodeMs: a.nodeMs + (b.nodeMs - a.nodeMs) * f, chromiumMs: a.chromiumMs + (b.chromiumMs - a.chromiumMs) * f };
  }

  /** CPU used between two wall-clock times (ms since the epoch), interpolated between samples. */
  between(start: number, end: number): CpuSplit {
    const a = this.valueAt(start);
    const b = this.valueAt(end);
    const nodeMs = Math.max(0, b.nodeMs - a.nodeMs);
    const chromiumMs = Math.max(0, b.chromiumMs - a.chromiumMs);
    return { nodeMs, chromiumMs, totalMs: nodeMs + chromiumMs };
  }
}
