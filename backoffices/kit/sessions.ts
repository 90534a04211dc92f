import { randomBytes } from 'node:crypto';

export interface Session {
  /** The value of the sid cookie; journal entries carry it as sessionId. */
  sid: string;
  username: string;
  /** Per-session token pages expose in <meta name="csrf-token">. */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  /** Set by a session_revoked fault; a revoked session never works again. */
  revoked: boolean;
}

export type SessionLookup = { kind: 'none' } | { kind: 'expired' } | { kind: 'live'; session: Session };

/**
 * Server-side sessions with an idle timeout, like a servlet container's: each
 * request extends the session; after ttl of silence it is gone. The cookie is
 * a browser-session cookie, so an expired session still sends its sid and the
 * server can tell "expired" apart from "never logged in".
 */
export class SessionStore {
  private sessions = new Map<string, Session>();

  constructor(private ttlMs: number) {}

  setTtlSeconds(seconds: number): void {
    this.ttlMs = seconds * 1000;
  }

  create(username: string, now = Date.now()): Session {
    const session: Session = {
      sid: randomBytes(18).toString('base64url'),
      username,
      csrf: randomBytes(18).toString('base64url'),
      createdAt: now,
      lastSeenAt: now,
      revoked: false,
    };
    this.sessions.set(session.sid, session);
    return session;
  }

  /** Looks a sid up and, when live, extends it. Unknown sids count as expired (e.g. after a reset). */
  lookup(sid: string | undefined, now = Date.now()): SessionLookup {
    if (sid === undefined || sid === '') return { kind: 'none' };
    const session = this.sessions.get(sid);
    if (!session) return { kind: 'expired' };
    // Judged against the previous request, not this one: an idle timeout.
    if (now - session.lastSeenAt > this.ttlMs) {
      this.sessions.delete(sid);
      return { kind: 'expired' };
    }
    session.lastSeenAt = now;
    return { kind: 'live', session };
  }

  /** Reads a live session without extending it. */
  peek(sid: string | undefined, now = Date.now()): Session | undefined {
    const session = sid === undefined ? undefined : this.sessions.get(sid);
    return session && now - session.lastSeenAt <= this.ttlMs ? session : undefined;
  }

  destroy(sid: string | undefined): void {
    if (sid !== undefined) this.sessions.delete(sid);
  }

  clear(): void {
    this.sessions.clear();
  }

  /** Sessions that would still let a request through. */
  liveCount(now = Date.now()): number {
    let live = 0;
    for (const s of this.sessions.values()) {
      if (!s.revoked && now - s.lastSeenAt <= this.ttlMs) live += 1;
    }
    return live;
  }
}
