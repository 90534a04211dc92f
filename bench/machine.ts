import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  /** Informative only: Linux counts every runnable thread, the benchmark's own Chromium and Node threads included. */
  loadAverage: { at: string; one: number; five: number; fifteen: number };
}

function cpuModelFromProc(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.split(':').slice(1).join(':').trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return cpus()[0]?.model ?? 'unknown';
}

export function loadNow(): MachineInfo['loadAverage'] {
  const [one, five, fifteen] = loadavg();
  return { at: new Date().toISOString(), one: round2(one!), five: round2(five!), fifteen: round2(fifteen!) };
}

export function describeMachine(): MachineInfo {
  return {
    cpuModel: cpuModelFromProc(),
    cores: cpus().length,
    memoryGiB: round2(totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: loadNow(),
  };
}

let ticksPerSecond: number | undefined;

/** Kernel clock ticks per second, the unit of the CPU times in /proc. */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU time every core of the machine has spent busy since boot, in ms (from
 * /proc/stat: user, nice, system, irq, softirq, steal). Off Linux: NaN.
 */
export function machineBusyMs(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return ((user + nice + system + irq + softirq + steal) * 1000) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
