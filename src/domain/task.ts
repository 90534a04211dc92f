import { createHash } from 'node:crypto';
import { z } from 'zod';

/** One write the orchestrator is asked to make: the only entry point for writes. */
export const WriteTask = z
  .object({
    taskId: z.string().regex(/^T-[A-Za-z0-9-]{1,60}$/, 'task ids look like T-20261202-acme (letters, digits, -)'),
    tenant: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case'),
    billNo: z.string().min(1, 'billNo is required').max(64, 'billNo is at most 64 characters'),
    action: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case'),
    params: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'parameter names are lower_snake_case'), z.string().max(500)).default({}),
    requestedBy: z.string().min(1).max(200).default('schedule'),
    /** Set when this write undoes another one (compensation). */
    compensates: z
      .string()
      .regex(/^k-[0-9a-f]{40}$/, 'compensates is the idempotency key (k-…) of the write being undone')
      .optional(),
  })
  .strict();
export type WriteTask = z.infer<typeof WriteTask>;

/** A batch: read one tenant's list, then one guarded write per pending item. */
export const BatchRequest = z
  .object({
    // A scheduler fills in an ISO 8601 time (T-acme-2026-12-02T01:00:00Z); colons are not allowed in
    // execution names, so they are dropped: the same delivery always yields the same task id.
    taskId: z.preprocess(
      (value) => (typeof value === 'string' ? value.replace(/:/g, '') : value),
      z.string().regex(/^T-[A-Za-z0-9-]{1,60}$/, 'task ids look like T-20261202-acme (letters, digits, -)'),
    ),
    tenant: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case'),
    requestedBy: z.string().min(1).max(200).default('schedule'),
  })
  .strict();
export type BatchRequest = z.infer<typeof BatchRequest>;

/**
 * Idempotency key = hash(taskId | tenant | billNo | action). Also the name of
 * the item's guarded-write execution, so Step Functions dedupes it too.
 */
export function idempotencyKey(task: Pick<WriteTask, 'taskId' | 'tenant' | 'billNo' | 'action'>): string {
  // A JSON array keeps field boundaries, so no value can borrow text from its neighbour.
  const digest = createHash('sha256')
    .update(JSON.stringify([task.taskId, task.tenant, task.billNo, task.action]))
    .digest('hex');
  return `k-${digest.slice(0, 40)}`;
}
