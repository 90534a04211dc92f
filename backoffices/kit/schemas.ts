/** The control API's answers every back office shares, and how a zod error is told to a person. */
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
