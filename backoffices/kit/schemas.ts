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
