import type { RateLimit } from './schemas.js';

/**
 * The portal's request limit per signed-in user on its JSON calls, a sliding window: over `max` requests in
 * `windowSeconds`, a call is answered 429 with Retry-After (the seconds until the oldest counted request
 * leaves the window). Refused calls are not counted, so a client that waits as told gets through.
 */
export class RateLimiter {
  private readonly seen = new Map<string, number[]>();

  constructor(private limit: RateLimit) {}

  configure(limit: RateLimit): void {
    this.limit = limit;
    this.seen.clear();
  }

  get current(): RateLimit {
    return { ...this.limit };
  }

  /** Counts the request, or returns the seconds to wait when it is over the limit. */
  take(who: string, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    if (this.limit.max === 0) return { ok: true };
    const windowMs = this.limit.windowSeconds * 1000;
    const times = (this.seen.get(who) ?? []).filter((t) => now - t < windowMs);
    if (times.length >= this.limit.max) {
      this.seen.set(who, times);
      const oldest = times[0] ?? now;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) };
    }
    times.push(now);
    this.seen.set(who, times);
    return { ok: true };
  }
}
