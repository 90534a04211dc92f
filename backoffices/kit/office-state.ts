import type { z } from 'zod';
import { describeIssues } from './schemas.js';
import { FaultBook, type FaultContext, type ScopedFaultSpec } from './faults.js';
import type { RequestTiming, ResetResult } from './schemas.js';
import { SessionStore } from './sessions.js';

/** The settings every back office resets to when a reset spec omits them. */
export interface BaseConfig {
  seed: number;
  asyncDelayMs: number;
  sessionTtlSeconds: number;
}

/** How pages look; a reset leaves these as they are. */
export interface PageConfig {
  pageSize: number;
  /** How long the app's script waits for a write before it says the request timed out. */
  clientTimeoutMs: number;
}

/** The start options a back office falls back to, besides its page size and its tenants. */
export const BACK_OFFICE_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  seed: 1,
  sessionTtlSeconds: 1800,
  asyncDelayMs: 300,
  clientTimeoutMs: 10_000,
} as const;

/** `defaults` overridden by every option that is set. */
export function withDefaults<D extends object, O extends object>(
  defaults: D,
  options: O,
): Omit<O, keyof D> & { [K in keyof D]: K extends keyof O ? Exclude<O[K], undefined> | D[K] : D[K] } {
  const set = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  return { ...defaults, ...set } as never;
}

/** Start options checked against `schema` (a bad one throws naming the field), unset ones taken from `defaults`. */
export function startOptions<S extends z.ZodType<object>, D extends object>(name: string, schema: S, options: unknown, defaults: D) {
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid ${name} options: ${describeIssues(parsed.error)}`);
  return withDefaults(defaults, parsed.data as z.output<S>);
}

/** Request timings kept in memory; older ones are dropped first. */
const MAX_TIMINGS = 20_000;

/**
 * What every in-repo back office keeps besides its records: sessions,
 * installed faults, request timings and the configuration a reset returns to.
 * A back office adds its records (rebuilt by `rebuild` on reset) and its users.
 */
export abstract class BackOfficeState<Config extends BaseConfig, Fault extends ScopedFaultSpec<string>> {
  readonly sessions: SessionStore;
  readonly faults = new FaultBook<Fault>();
  protected current: Config;
  private timingLog: RequestTiming[] = [];

  readonly pageSize: number;
  readonly clientTimeoutMs: number;

  /** `base` may hold more (the start options): a reset takes from it only what its spec names. */
  constructor(protected readonly base: Config & PageConfig) {
    this.current = { ...base };
    this.pageSize = base.pageSize;
    this.clientTimeoutMs = base.clientTimeoutMs;
    this.sessions = new SessionStore(base.sessionTtlSeconds * 1000);
  }

  /** Replaces the records with fresh ones for `config`; returns how many there are. */
  protected abstract rebuild(config: Config): number;

  /** Back to a fresh book: omitted spec fields fall back to the startup configuration. */
  reset(spec: { [K in keyof Config]?: Config[K] | undefined }): ResetResult {
    const started = performance.now();
    const next: Config = { ...this.base };
    for (const key of Object.keys(spec) as Array<keyof Config>) next[key] = spec[key] ?? this.base[key];
    this.current = next;
    const bills = this.rebuild(next);
    this.sessions.clear();
    this.sessions.setTtlSeconds(next.sessionTtlSeconds);
    this.faults.clear();
    this.timingLog = [];
    return { ok: true, durationMs: Math.round((performance.now() - started) * 1000) / 1000, bills };
  }

  /** How long a write stays in its pending state: an async_delay_ms fault overrides the configured delay. */
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
}
