import { readdirSync, readFileSync } from 'node:fs';

/**
 * Memory of the browser process tree, read from /proc: every Chromium process
 * that descends from this Node process. RSS counts shared pages once per
 * process (so the sum overstates); PSS splits shared pages between their users
 * and is the better "what does one more context cost" figure. Both are kept.
 */

export interface TreeMemory {
  processes: number;
  rssMiB: number;
  pssMiB: number;
}

/**
 * /proc/<pid>/stat split into the command name and the fields after it
 * (state is fields[0], ppid fields[1], utime fields[11] ... cstime fields[14]);
 * undefined once the process is gone.
 */
export function readProcStat(pid: number): { name: string; fields: string[] } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces; fields resume after the last ')'.
    const close = stat.lastIndexOf(')');
    return { name: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  const stat = readProcStat(pid);
  return stat ? Number(stat.fields[1]) : undefined;
}

/**
 * By the command name in /proc/<pid>/stat, not the command line: a renderer
 * that has exited but is not yet reaped (Chromium reaps lazily, up to seconds
 * later) has an empty command line yet still holds its CPU time, which moves
 * to the browser process only when it is reaped. Missing it in between made a
 * closed context's CPU vanish for a while.
 */
function isChromium(pid: number): boolean {
  return /chrom|headless_shell/i.test(readProcStat(pid)?.name ?? '');
}

function childrenOf(pid: number): number[] | undefined {
  try {
    const out: number[] = [];
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Chromium processes below `root` (this process by default). */
export function chromiumPids(root = process.pid): number[] {
  let children: (pid: number) => number[];
  if (childrenOf(root) !== undefined) {
    children = (pid) => childrenOf(pid) ?? [];
  } else {
    // Kernels without /proc/<pid>/task/<tid>/children: build the tree from every process's parent.
    const map = new Map<number, number[]>();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const parent = parentOf(Number(name));
      if (parent === undefined) continue;
      map.set(parent, [...(map.get(parent) ?? []), Number(name)]);
    }
    children = (pid) => map.get(pid) ?? [];
  }
  const found: number[] = [];
  const queue = [...children(root)];
  while (queue.length) {
    const pid = queue.shift()!;
    if (isChromium(pid)) found.push(pid);
    queue.push(...children(pid));
  }
  return found;
}

function kib(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

export function treeMemory(root = process.pid): TreeMemory {
  let rss = 0;
  let pss = 0;
  const pids = chromiumPids(root);
  for (const pid of pids) {
    try {
      rss += kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
    } catch {
      continue; // exited between listing and reading
    }
    try {
      pss += kib(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      // smaps_rollup needs Linux >= 4.14 and the same user; PSS then stays partial.
    }
  }
  return { processes: pids.length, rssMiB: Math.round(rss / 102.4) / 10, pssMiB: Math.round(pss / 102.4) / 10 };
}
