import type { RequestTiming } from '../backoffices/simulator/server.js';

/**
 * Splits wall time into "waiting on the vendor" and "everything else", from
 * the simulator's own per-request server-side durations. The sum counts every
 * request; the busy time is the union of request intervals, which is what a
 * single item actually waits when requests overlap.
 */

export interface Interval {
  start: number;
  end: number;
}

export interface VendorRequest extends Interval {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

export function toRequests(timings: readonly RequestTiming[]): VendorRequest[] {
  return timings
    .map((t) => {
      const start = Date.parse(t.startedAt);
      return { start, end: start + t.durationMs, method: t.method, path: t.path, status: t.status, durationMs: t.durationMs };
    })
    .sort((a, b) => a.start - b.start);
}

/** Requests that started inside the window. */
export function within(requests: readonly VendorRequest[], window: Interval): VendorRequest[] {
  return requests.filter((r) => r.start >= window.start && r.start <= window.end);
}

export function sumMs(requests: readonly VendorRequest[]): number {
  return requests.reduce((total, r) => total + r.durationMs, 0);
}

/** Union of the request intervals clipped to the window, in ms. */
export function busyMs(requests: readonly VendorRequest[], window?: Interval): number {
  const clipped = requests
    .map((r) => ({ start: window ? Math.max(r.start, window.start) : r.start, end: window ? Math.min(r.end, window.end) : r.end }))
    .filter((r) => r.end > r.start)
    .sort((a, b) => a.start - b.start);
  let total = 0;
  let current: Interval | undefined;
  for (const r of clipped) {
    if (!current || r.start > current.end) {
      if (current) total += current.end - current.start;
      current = { ...r };
    } else {
      current.end = Math.max(current.end, r.end);
    }
  }
  if (current) total += current.end - current.start;
  return total;
}

/** "GET /diff/list" style labels, with the query and bill numbers folded so requests group by kind. */
export function requestKind(r: Pick<VendorRequest, 'method' | 'path'>): string {
  const path = r.path.split('?')[0]!.replace(/[A-Z]+-\d{6}-\d{4}/g, '<bill>');
  return `${r.method} ${path}`;
}
