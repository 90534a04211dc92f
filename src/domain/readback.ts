import { setTimeout as wait } from 'node:timers/promises';

/**
 * Readback verdicts. Only an observation from an independent source decides
 * whether a write landed; a toast, a vanished button or a screenshot never does.
 */

export type Verdict = 'confirmed' | 'not_applied' | 'unknown';

export interface Expectation {
  targetStatus: string;
  settlingStatuses: readonly string[];
  /** The status the item had before the write (from the snapshot). */
  preStatus?: string;
}

export interface Observation {
  status?: string;
  at: string;
  source: string;
  error?: string;
}

export interface ReadbackResult {
  verdict: Verdict;
  observedStatus?: string;
  source: string;
  observations: Observation[];
  reason: string;
}

/**
 * Judges a sequence of observations. Confirmed as soon as the target shows.
 * Not applied only once the item is settled in a non-target state: the same
 * non-settling status seen twice in a row. Anything else is unknown.
 */
export function judge(expectation: Expectation, observations: readonly Observation[]): ReadbackResult | undefined {
  const last = observations.at(-1);
  const source = last?.source ?? 'none';
  if (!last) return undefined;
  if (last.status === expectation.targetStatus) {
    return {
      verdict: 'confirmed',
      observedStatus: last.status,
      source,
      observations: [...observations],
      reason: `${source} shows ${last.status}`,
    };
  }
  if (last.status === undefined || expectation.settlingStatuses.includes(last.status)) return undefined;
  const previous = observations.at(-2);
  if (previous?.status === last.status) {
    const reason =
      last.status === expectation.preStatus
        ? `${source} still shows ${last.status}, the state before the write`
        : `${source} settled on ${last.status}, not ${expectation.targetStatus}`;
    return { verdict: 'not_applied', observedStatus: last.status, source, observations: [...observations], reason };
  }
  return undefined;
}

export interface PollOptions {
  deadlineMs: number;
  intervalMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Polls `observe` until the observations settle into a verdict or the deadline passes. */
export async function pollUntilSettled(
  expectation: Expectation,
  observe: () => Promise<Observation>,
  options: PollOptions,
): Promise<ReadbackResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? wait;
  const deadline = now() + options.deadlineMs;
  const observations: Observation[] = [];
  for (;;) {
    observations.push(await observe());
    const verdict = judge(expectation, observations);
    if (verdict) return verdict;
    if (now() + options.intervalMs > deadline) {
      const last = observations.at(-1);
      return {
        verdict: 'unknown',
        observedStatus: last?.status,
        source: last?.source ?? 'none',
        observations,
        reason: `no settled state within ${options.deadlineMs} ms (last: ${last?.status ?? last?.error ?? 'nothing'})`,
      };
    }
    await sleep(options.intervalMs);
  }
}
