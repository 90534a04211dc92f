import { setTimeout as sleep } from 'node:timers/promises';

/**
 * One time budget for one operation. Nested waits spend from it instead of starting their own clock, so an
 * operation made of several waits (find the scope, then the target; open a page, then poll it) ends when its
 * budget does, not when the sum of its parts does. `signal` aborts when the budget is spent or the operation is
 * given up, for cleanup in whatever is still waiting.
 */
export interface Deadline {
  /** Epoch milliseconds at which the budget is spent. */
  readonly at: number;
  /** Milliseconds left, never below 0. */
  remaining(): number;
  /** True once the budget is spent or the operation was aborted. */
  readonly expired: boolean;
  /** Aborted when the budget is spent, when `abort` is called, or when the parent deadline's signal aborts. */
  readonly signal: AbortSignal;
  /** A nested wait: at most `ms`, never past this deadline, aborted with it. */
  within(ms: number): Deadline;
  /** Waits `ms`, or what is left when less; returns early when the deadline is aborted. */
  sleep(ms: number): Promise<void>;
  /** Gives the operation up: `signal` aborts and `expired` is true from now on. */
  abort(reason?: unknown): void;
}

export interface DeadlineOptions {
  /** The enclosing operation's signal: aborting it aborts this deadline. */
  signal?: AbortSignal;
  /** The clock (tests pass their own); Date.now by default. */
  now?: () => number;
}

/** A deadline `ms` from now. */
export function deadline(ms: number, options: DeadlineOptions = {}): Deadline {
  const now = options.now ?? Date.now;
  return create(now() + Math.max(0, ms), now, options.signal);
}

function create(at: number, now: () => number, parent: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  // The timer only aborts the signal; it never keeps the process alive, and stops once the signal aborted.
  const timer = setTimeout(() => controller.abort(new DeadlineExpiredError()), Math.max(0, Math.min(at - now(), MAX_TIMER_MS)));
  timer.unref();
  controller.signal.addEventListener(
    'abort',
    () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
    { once: true },
  );
  const self: Deadline = {
    at,
    remaining: () => (controller.signal.aborted ? 0 : Math.max(0, at - now())),
    get expired() {
      return controller.signal.aborted || now() >= at;
    },
    signal: controller.signal,
    within: (ms) => create(Math.min(at, now() + Math.max(0, ms)), now, controller.signal),
    sleep: async (ms) => {
      const wait = Math.min(ms, self.remaining());
      if (wait <= 0) return;
      await sleep(wait, undefined, { signal: controller.signal }).catch(() => undefined);
    },
    abort: (reason) => controller.abort(reason),
  };
  return self;
}

/** The reason a deadline's signal aborts when its budget is spent. */
export class DeadlineExpiredError extends Error {
  override readonly name = 'DeadlineExpiredError';
  constructor() {
    super('the operation ran out of time');
  }
}

/** setTimeout's longest delay (about 24.8 days); a longer budget is only checked, never timed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `check` until it returns true or the deadline passes, `intervalMs` apart: true when it did, false when the
 * budget ran out first. The check runs at least once, so a zero budget still looks.
 */
export async function pollUntil(limit: Deadline, check: () => Promise<boolean>, intervalMs: number): Promise<boolean> {
  for (;;) {
    if (await check()) return true;
    if (limit.expired) return false;
    await limit.sleep(intervalMs);
  }
}
