import type { FaultContext } from '../simulator/faults.js';
import { FaultBook } from '../simulator/faults.js';
import type { RequestTiming, ResetResult } from '../simulator/schemas.js';
import { SessionStore } from '../simulator/sessions.js';
import { ledgerlyUsersFor, orgsOf, type LedgerlyUser } from './accounts.js';
import { DiscrepancyBook } from './book.js';
import type { LedgerlyFaultSpec, LedgerlyResetSpec, LedgerlyState, OrgSpec } from './schemas.js';
import { generateDiscrepancies, orgName } from './seed-data.js';

export interface LedgerlyBaseConfig {
  seed: number;
  orgs: OrgSpec[];
  asyncDelayMs: number;
  sessionTtlSeconds: number;
}

const MAX_TIMINGS = 20_000;

/**
 * All mutable state of Ledgerly: discrepancies and journal, sessions (with the
 * org each session is working in), faults and request timings. A reset returns
 * to the startup configuration for every field its spec leaves out.
 */
export class LedgerlyOffice {
  book: DiscrepancyBook;
  readonly sessions: SessionStore;
  readonly faults = new FaultBook<LedgerlyFaultSpec>();
  /** sid -> the org slug the session is working in. */
  readonly sessionOrg = new Map<string, string>();
  private timingLog: RequestTiming[] = [];
  private current: LedgerlyBaseConfig;
  private users: LedgerlyUser[];

  constructor(
    private readonly base: LedgerlyBaseConfig,
    readonly pageSize: number,
    readonly clientTimeoutMs: number,
  ) {
    this.current = { ...base };
    this.book = new DiscrepancyBook(generateDiscrepancies(base.seed, base.orgs));
    this.sessions = new SessionStore(base.sessionTtlSeconds * 1000);
    this.users = ledgerlyUsersFor(this.orgIds());
  }

  reset(spec: LedgerlyResetSpec): ResetResult {
    const started = performance.now();
    this.current = {
      seed: spec.seed ?? this.base.seed,
      orgs: spec.orgs ?? this.base.orgs,
      asyncDelayMs: spec.asyncDelayMs ?? this.base.asyncDelayMs,
      sessionTtlSeconds: spec.sessionTtlSeconds ?? this.base.sessionTtlSeconds,
    };
    this.book.dispose();
    this.book = new DiscrepancyBook(generateDiscrepancies(this.current.seed, this.current.orgs));
    this.sessions.clear();
    this.sessionOrg.clear();
    this.sessions.setTtlSeconds(this.current.sessionTtlSeconds);
    this.faults.clear();
    this.timingLog = [];
    this.users = ledgerlyUsersFor(this.orgIds());
    return { ok: true, durationMs: Math.round((performance.now() - started) * 1000) / 1000, bills: this.book.size };
  }

  orgIds(): string[] {
    return this.current.orgs.map((o) => o.id);
  }

  orgSummary(slug: string): { slug: string; name: string } {
    const spec = this.current.orgs.find((o) => o.id === slug);
    return { slug, name: spec ? orgName(spec) : slug };
  }

  userByUsername(username: string): LedgerlyUser | undefined {
    return this.users.find((u) => u.username === username);
  }

  orgsOf(user: LedgerlyUser): string[] {
    return orgsOf(user, this.orgIds());
  }

  /** How long resolve/refund stay in their review state: an async_delay_ms fault overrides the configured delay. */
  settleDelayMs(context: FaultContext): number {
    return this.faults.fire('async_delay_ms', context)?.ms ?? this.current.asyncDelayMs;
  }

  recordTiming(timing: RequestTiming): void {
    this.timingLog.push(timing);
    if (this.timingLog.length > MAX_TIMINGS) this.timingLog.splice(0, this.timingLog.length - MAX_TIMINGS);
  }

  timings(): RequestTiming[] {
    return [...this.timingLog];
  }

  state(): LedgerlyState {
    return { discrepancies: this.book.snapshot(), sessions: this.sessions.liveCount(), faults: this.faults.list() };
  }

  dispose(): void {
    this.book.dispose();
  }
}
