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
  /**
   * Until when (epoch ms) the state before the write is not a settled answer: the last commit click
   * plus the settle window. A vendor that applies a change slowly shows the old state, with no interim
   * status, until it has; read before then, the old state says nothing about whether the click landed.
   */
  preStatusOpenUntil?: number;
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
 * non-settling status seen twice in a row — for the state before the write,
 * only once the settle window after the last commit click has passed
 * (preStatusOpenUntil). Anything else is unknown.
 */
export function judge(
  expectation: Expectation,
  observations: readonly Observation[],
  /** When the last observation was made (epoch ms); with preStatusOpenUntil, the old state settles only after it. */
  at?: number,
): ReadbackResult | undefined {
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
  // A run that starts at readback (an operator's retry, a resumed run) has no snapshot: any other state may be the old one.
  const mayBeOld = expectation.preStatus === undefined || last.status === expectation.preStatus;
  const windowOpen = mayBeOld && expectation.preStatusOpenUntil !== undefined && (at ?? 0) < expectation.preStatusOpenUntil;
  if (previous?.status === last.status && !windowOpen) {
    const reason =
      last.status === expectation.preStatus
        ? `${source} still shows ${last.status}, the state before the write${
            expectation.preStatusOpenUntil !== undefined ? ', to the end of the settle window after the last commit click' : ''
          }`
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
    const verdict = judge(expectation, observations, now());
    if (verdict) return verdict;
    if (now() + options.intervalMs > deadline) {
      // The settle window ends no later than the deadline: the old state seen to the end of it is settled.
      const openUntil = expectation.preStatusOpenUntil ?? 0;
      const closing = judge(expectation, observations, openUntil <= deadline ? Math.max(now(), openUntil) : now());
      if (closing) return closing;
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
