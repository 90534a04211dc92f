import type { BatchProgress } from '../../twin/runtime/index.js';

/**
 * Batch progress on stderr: a bar redrawn in place on a terminal, plain lines
 * (only when something changed) when stderr is a file or a pipe, so logs stay
 * readable. stdout is left to the one JSON summary line.
 */
export interface ProgressRenderer {
  update(progress: BatchProgress): void;
  /** Ends the bar's line (a terminal) so the next output starts on a fresh one. */
  finish(): void;
}

export interface ProgressTarget {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const BAR_WIDTH = 24;

/** Claim statuses in the order people read them, lower-cased for display. */
const STATUS_ORDER = ['DONE', 'WRITING', 'CLAIMED', 'TAKEOVER', 'STALE', 'REJECTED', 'EXPIRED', 'FAILED'];

const rank = (status: string) => (STATUS_ORDER.includes(status) ? STATUS_ORDER.indexOf(status) : STATUS_ORDER.length);

export function statusSummary(byStatus: Record<string, number>): string {
  return Object.entries(byStatus)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([status, n]) => `${status.toLowerCase()} ${n}`)
    .join(', ');
}

export function progressBar(finished: number, total: number, width = BAR_WIDTH): string {
  const filled = total > 0 ? Math.min(width, Math.round((finished / total) * width)) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** One line describing the progress, without the bar. */
export function progressText(p: BatchProgress): string {
  const statuses = statusSummary(p.byStatus);
  if (p.phase === 'reading' || (p.phase === undefined && p.claimed === 0)) return 'reading the discrepancy list…';
  const counted = p.total !== undefined ? `${p.finished ?? 0}/${p.total} items` : `${p.claimed} claimed`;
  const tail = p.phase === 'sealing' ? ' · writing pages and sealing the evidence…' : '';
  return `${counted}${statuses ? ` (${statuses})` : ''}${tail}`;
}

export function createProgressRenderer(target: ProgressTarget = process.stderr, now: () => number = Date.now): ProgressRenderer {
  const began = now();
  let last = '';
  let drawn = false;
  if (target.isTTY) {
    return {
      update(p) {
        const seconds = ((now() - began) / 1000).toFixed(0).padStart(3);
        const bar = p.total !== undefined ? `${progressBar(p.finished ?? 0, p.total)} ` : '';
        let line = `  ${bar}${progressText(p)} ${seconds}s`;
        const columns = target.columns ?? 100;
        if (line.length > columns - 1) line = `${line.slice(0, columns - 2)}…`;
        if (line === last) return;
        last = line;
        drawn = true;
        // \r and "erase line" redraw in place.
        target.write(`\r\x1b[2K${line}`);
      },
      finish() {
        if (drawn) target.write('\n');
        drawn = false;
      },
    };
  }
  return {
    update(p) {
      const line = `  … ${progressText(p)}`;
      if (line === last) return;
      last = line;
      target.write(`${line}\n`);
    },
    finish() {},
  };
}
