import { setTimeout as sleep } from 'node:timers/promises';

/** The clock a pace reads and sleeps on (injected in tests, so they never depend on timing). */
export interface PaceClock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
}

const SYSTEM_CLOCK: PaceClock = { now: Date.now, sleep };

/**
 * A request pace: at most `maxRequests` requests in any `perMs` (a sliding window, the way vendors count a rate
 * limit). `take()` resolves when one more request may go; callers go in the order they asked. One pace per vendor
 * account and process (`paceFor`), shared by everything that acts as that account, so concurrent work of one
 * identity stays under the limit together instead of each part staying under it alone.
 */
export class RequestPace {
  /** When each request in the current window was let go, oldest first. */
  private readonly sent: number[] = [];
  private queue: Promise<void> = Promise.resolve();
  /** Requests let go, those that had to wait for the window, and the time they waited in all. */
  readonly stats = { taken: 0, delayed: 0, delayedMs: 0 };

  constructor(
    readonly maxRequests: number,
    readonly perMs: number,
    private readonly clock: PaceClock = SYSTEM_CLOCK,
  ) {
    if (!Number.isInteger(maxRequests) || maxRequests < 1) throw new RangeError('maxRequests must be a whole number of at least 1');
    if (!(perMs > 0)) throw new RangeError('perMs must be more than 0');
  }

  /** Waits until one more request fits in the window and counts it; resolves with how long it waited (ms), in line included. */
  take(): Promise<number> {
    const asked = this.clock.now();
    const turn = this.queue.then(() => this.next(asked));
    // The next caller waits for this one's turn, never for its failure.
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private async next(asked: number): Promise<number> {
    for (;;) {
      const now = this.clock.now();
      while (this.sent.length > 0 && this.sent[0]! <= now - this.perMs) this.sent.shift();
      if (this.sent.length < this.maxRequests) {
        this.sent.push(now);
        this.stats.taken += 1;
        const waited = now - asked;
        if (waited > 0) {
          this.stats.delayed += 1;
          this.stats.delayedMs += waited;
        }
        return waited;
      }
      // Until the oldest request leaves the window (it counts for exactly perMs), then look again.
      await this.clock.sleep(this.sent[0]! + this.perMs - now);
    }
  }
}

/** What a pace is made of, as the site pack declares it (`pace`). */
export interface PaceSpec {
  maxRequests: number;
  perSeconds: number;
}

const paces = new Map<string, RequestPace>();

/**
 * The process's pace for one vendor account (`account`: the vendor's origin and the username), made on first use
 * with the pack's numbers. Every caller acting as the same account gets the same pace.
 */
export function paceFor(account: string, spec: PaceSpec): RequestPace {
  let pace = paces.get(account);
  if (!pace || pace.maxRequests !== spec.maxRequests || pace.perMs !== spec.perSeconds * 1000) {
    pace = new RequestPace(spec.maxRequests, spec.perSeconds * 1000);
    paces.set(account, pace);
  }
  return pace;
}

/** The name a pace is kept under: the vendor counts an account on its site, whatever tenant or context uses it. */
export function paceAccount(baseUrl: string, username: string): string {
  return `${new URL(baseUrl).origin} ${username}`;
}

/** Whether a request to `url` counts against a pace limited to `paths` (path prefixes; none: every path). */
export function pacedPath(url: URL, paths: readonly string[] | undefined): boolean {
  return !paths || paths.some((prefix) => url.pathname.startsWith(prefix));
}
