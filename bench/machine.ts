import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverage: { at: string; one: number; five: number; fifteen: number };
  /** Load per core at start above 1 means other work competed for the CPU during the run. */
  loadWarning?: string;
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
  const cores = cpus().length;
  const load = loadNow();
  const perCore = load.one / cores;
  return {
    cpuModel: cpuModelFromProc(),
    cores,
    memoryGiB: round2(totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: load,
    ...(perCore > 1
      ? {
          loadWarning: `load average ${load.one} on ${cores} cores (${round2(perCore)} per core) at start: other processes competed for the CPU, so absolute times are inflated and noisy; compare ratios, and rerun on an idle machine before quoting absolute numbers`,
        }
      : {}),
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
