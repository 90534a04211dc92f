/**
 * The control surface every back office shares (fault kinds and scopes, the fault list, reset options) and its
 * answers, and how a zod error is told to a person.
 */
import { z } from 'zod';

export const RequestTimingSchema = z.object({
  method: z.string(),
  /** The request target as sent, path and query. */
  path: z.string(),
  /** 499 when the client went away before an answer was sent. */
  status: z.number().int(),
  startedAt: z.string(),
  durationMs: z.number(),
  identity: z.string().optional(),
  /** The session the request came with (a login: the session it started): tells apart two logins of one identity. */
  sessionId: z.string().optional(),
});
export type RequestTiming = z.infer<typeof RequestTimingSchema>;

export const ResetResultSchema = z.object({
  ok: z.literal(true),
  /** Time spent inside the server on the reset itself. */
  durationMs: z.number(),
  bills: z.number().int(),
});
export type ResetResult = z.infer<typeof ResetResultSchema>;

/** Names the field of the first few issues, e.g. `faults.0.ms: ms is required for a slow_ms fault`. */
export function describeIssues(error: z.ZodError, prefix = ''): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

export const FAULT_KINDS = [
  'redesign',
  'half_success',
  'commit_then_timeout',
  'error_500',
  'slow_ms',
  'async_delay_ms',
  'session_revoked',
  'permission_denied',
  'rate_limited',
  'applied_then_reverted',
] as const;

export const SeedSchema = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 1);
export const AsyncDelayMsSchema = z.number().int().min(0).max(600_000);
export const SessionTtlSecondsSchema = z
  .number()
  .int()
  .min(1)
  .max(7 * 24 * 3600);

export const FaultKindSchema = z.enum(FAULT_KINDS);
export type FaultKind = z.infer<typeof FaultKindSchema>;

/**
 * A fault spec whose bill scope follows one back office's record numbers. Every
 * in-repo back office takes the same kinds and scopes, so a test can install
 * the same fault on either.
 */
export function faultSpecSchemaFor(bill: z.ZodString, tenant: z.ZodString) {
  return z
    .strictObject({
      kind: FaultKindSchema,
      bill: bill.optional(),
      tenant: tenant.optional(),
      /** A username, e.g. svc-recon-acme. */
      identity: z.string().min(1).max(64).optional(),
      ms: z.number().int().min(0).max(600_000).optional(),
      /** How many times the fault fires; unlimited when absent. */
      times: z.number().int().min(1).max(1_000_000).optional(),
      /** rate_limited only: every request (default), reads (GET/HEAD) or writes (every other method). */
      requests: z.enum(['all', 'reads', 'writes']).optional(),
    })
    .superRefine((f, ctx) => {
      if ((f.kind === 'slow_ms' || f.kind === 'async_delay_ms') && f.ms === undefined) {
        ctx.addIssue({ code: 'custom', path: ['ms'], message: `ms is required for a ${f.kind} fault` });
      }
    });
}

/** A fault as the control API reports it: the spec plus how often it fired. */
export const ActiveFaultSchema = z.object({
  kind: FaultKindSchema,
  bill: z.string().optional(),
  tenant: z.string().optional(),
  identity: z.string().optional(),
  ms: z.number().optional(),
  times: z.number().optional(),
  requests: z.enum(['all', 'reads', 'writes']).optional(),
  /** Firings left; absent when unlimited. */
  remaining: z.number().optional(),
  fired: z.number(),
});
export type ActiveFault = z.infer<typeof ActiveFaultSchema>;

/**
 * The settings a reset spec may name on every back office; a back office spreads these into its own reset
 * schema beside its records' list and its own controls.
 */
export const resetSpecShape = {
  seed: SeedSchema.optional(),
  asyncDelayMs: AsyncDelayMsSchema.optional(),
  sessionTtlSeconds: SessionTtlSecondsSchema.optional(),
};

/** The start options every back office takes; a back office spreads these into its own options schema. */
export const startOptionsShape = {
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  controlToken: z.string().min(1).max(200).optional(),
  ...resetSpecShape,
  /** Rows (or cards) per page. */
  pageSize: z.number().int().min(1).max(100).optional(),
  /** How long the page's script waits for a write before it says the request timed out. */
  clientTimeoutMs: z.number().int().min(100).max(120_000).optional(),
};

/** How a back office's list of tenants (orgs, ...) is checked: the words of its messages and the size of its numbering. */
export interface SpecListRules<C extends string> {
  /** What one item is called in messages, e.g. `tenant`. */
  noun: string;
  max: number;
  /** The message past `max`; zod's own when absent. */
  maxMessage?: string;
  /** How many records of each group an item makes when it does not say: the item's records are their sum. */
  counts: Readonly<Record<C, number>>;
  /** How many records one item's numbering holds. */
  capacity: number;
  /** The message for an item that makes more than `capacity` records. */
  overCapacity(id: string, total: number): string;
}

/** A list of tenant specs: at least one, ids unique, each within its numbering's capacity. */
export function specListSchema<C extends string, S extends { id: string } & { [K in C]?: number | undefined }>(
  item: z.ZodType<S>,
  rules: SpecListRules<C>,
) {
  const groups = Object.keys(rules.counts) as C[];
  return z
    .array(item)
    .min(1, `give at least one ${rules.noun}`)
    .max(rules.max, rules.maxMessage)
    .superRefine((specs, ctx) => {
      const seen = new Set<string>();
      specs.forEach((spec, i) => {
        if (seen.has(spec.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate ${rules.noun} id "${spec.id}"` });
        seen.add(spec.id);
        const total = groups.reduce((sum, group) => sum + (spec[group] ?? rules.counts[group]), 0);
        if (total > rules.capacity) ctx.addIssue({ code: 'custom', path: [i], message: rules.overCapacity(spec.id, total) });
      });
    });
}

/**
 * One committed vendor mutation, in the shape every in-repo back office journals: `tenant` holds the tenant
 * (org), `billNo` the record's number, `action` the back office's own verbs.
 */
export function journalEntrySchemaFor<A extends z.ZodType<string>, V extends z.ZodType<string>>(action: A, via: V) {
  return z.object({
    seq: z.number().int(),
    at: z.string(),
    tenant: z.string(),
    billNo: z.string(),
    action,
    identity: z.string(),
    sessionId: z.string(),
    via,
    detail: z.record(z.string(), z.unknown()).optional(),
  });
}

/** A JSON request body checked against `schema`: the value, or a message naming what is wrong (`body: ...`). */
export function parseJsonText<T extends z.ZodType>(
  text: string,
  schema: T,
): { ok: true; data: z.output<T> } | { ok: false; message: string; error?: z.ZodError } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'body: not valid JSON' };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error, 'body'), error: parsed.error };
  return { ok: true, data: parsed.data };
}

/** How many records of one group a tenant spec asks for. */
export function recordCount(max: number) {
  return z.number().int().min(0).max(max).optional();
}

/** What every back office's /__sim/state answers besides its records and its own controls. */
export const officeStateShape = {
  /** Live sessions: not expired, not revoked. */
  sessions: z.number().int(),
  faults: z.array(ActiveFaultSchema),
};
