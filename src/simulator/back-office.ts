import { accountsFor, identityOf, type Identity, type SimAccount } from './accounts.js';
import { FaultBook, type FaultContext } from './faults.js';
import { Ledger } from './ledger.js';
import type { RequestTiming, ResetResult, ResetSpec, SimState, TenantSpec } from './schemas.js';
import { generateBills } from './seed-data.js';
import { SessionStore } from './sessions.js';

/** The settings a reset returns to when its spec omits them. */
export interface BaseConfig {
  seed: number;
  tenants: TenantSpec[];
  asyncDelayMs: number;
  sessionTtlSeconds: number;
}

/** Request timings kept in memory; older ones are dropped first. */
const MAX_TIMINGS = 20_000;

/**
 * All mutable state of one simulated vendor: bills and journal (ledger),
 * sessions, installed faults, request timings. Routes read and change it;
 * the control API resets it.
 */
export class BackOffice {
  ledger: Ledger;
  readonly sessions: SessionStore;
  readonly faults = new FaultBook();
  private timingLog: RequestTiming[] = [];
  private current: BaseConfig;
  private accounts: SimAccount[];

  constructor(
    private readonly base: BaseConfig,
    readonly pageSize: number,
    readonly clientTimeoutMs: number,
  ) {
    this.current = { ...base };
    this.ledger = new Ledger(generateBills(base.seed, base.tenants));
    this.sessions = new SessionStore(base.sessionTtlSeconds * 1000);
    this.accounts = accountsFor(this.tenantIds());
  }

  /** Back to a fresh book: omitted spec fields fall back to the startup configuration. */
  reset(spec: ResetSpec): ResetResult {
    const started = performance.now();
    this.current = {
      seed: spec.seed ?? this.base.seed,
      tenants: spec.tenants ?? this.base.tenants,
      asyncDelayMs: spec.asyncDelayMs ?? this.base.asyncDelayMs,
      sessionTtlSeconds: spec.sessionTtlSeconds ?? this.base.sessionTtlSeconds,
    };
    this.ledger.dispose();
    this.ledger = new Ledger(generateBills(this.current.seed, this.current.tenants));
    this.sessions.clear();
    this.sessions.setTtlSeconds(this.current.sessionTtlSeconds);
    this.faults.clear();
    this.timingLog = [];
    this.accounts = accountsFor(this.tenantIds());
    const bills = this.ledger.size;
    return { ok: true, durationMs: Math.round((performance.now() - started) * 1000) / 1000, bills };
  }

  tenantIds(): string[] {
    return this.current.tenants.map((t) => t.id);
  }

  accountByUsername(username: string): SimAccount | undefined {
    return this.accounts.find((a) => a.username === username);
  }

  accountByToken(token: string): SimAccount | undefined {
    return this.accounts.find((a) => a.token === token);
  }

  identityFor(account: SimAccount): Identity {
    return identityOf(account, this.tenantIds());
  }

  /** How long a write stays PROCESSING: an async_delay_ms fault overrides the configured delay. */
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

  state(): SimState {
    return { bills: this.ledger.snapshot(), sessions: this.sessions.liveCount(), faults: this.faults.list() };
  }

  dispose(): void {
    this.ledger.dispose();
  }
}
