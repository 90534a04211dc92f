/** Small, dependency-free statistics for benchmark samples. */

export interface Summary {
  n: number;
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile on a sorted copy; p in [0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  return {
    n,
    median: round(median(values)),
    p95: round(percentile(values, 95)),
    mean: round(n ? values.reduce((a, b) => a + b, 0) / n : Number.NaN),
    min: round(n ? Math.min(...values) : Number.NaN),
    max: round(n ? Math.max(...values) : Number.NaN),
  };
}

export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
