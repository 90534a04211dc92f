import { createHash } from 'node:crypto';
import { z } from 'zod';

/** An idempotency key: the tenant's prefix and 32 hex digits; at most 76 characters, inside the 80 of an execution name. */
export const KEY_PATTERN = /^k-[a-z][a-z0-9-]{1,40}_[0-9a-f]{32}$/;

/** A task id: `T-` and up to 60 letters, digits and dashes; a batch's executions are named after it. */
export const TaskId = z.string().regex(/^T-[A-Za-z0-9-]{1,60}$/, 'task ids look like T-20261202-acme (letters, digits, -)');
/** A tenant id as a task carries it: it starts every key of the tenant's (see tenantKeyPrefix). */
export const TenantId = z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'tenant ids are lower-kebab-case');
/** Who asked for the task; a schedule when nobody says. */
const RequestedBy = z.string().min(1).max(200).default('schedule');
/** The entry point's attestation of requestedBy (src/domain/requester-attestation.ts); routing refuses a task without it. */
const Attestation = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, 'attestation is the base64url HMAC an entry point made')
  .optional();

/** One write the orchestrator is asked to make: the only entry point for writes. */
export const WriteTask = z
  .object({
    taskId: TaskId,
    tenant: TenantId,
    billNo: z.string().min(1, 'billNo is required').max(64, 'billNo is at most 64 characters'),
    action: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case'),
    params: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'parameter names are lower_snake_case'), z.string().max(500)).default({}),
    requestedBy: RequestedBy,
    /** Set when this write undoes another one (compensation). */
    compensates: z.string().regex(KEY_PATTERN, 'compensates is the idempotency key (k-<tenant>_…) of the write being undone').optional(),
    attestation: Attestation,
  })
  .strict();
export type WriteTask = z.infer<typeof WriteTask>;

/** A batch: read one tenant's list, then one guarded write per pending item. */
export const BatchRequest = z
  .object({
    // A scheduler fills in an ISO 8601 time (T-acme-2026-12-02T01:00:00Z); colons are not allowed in
    // execution names, so they are dropped: the same delivery always yields the same task id.
    taskId: z.preprocess((value) => (typeof value === 'string' ? value.replace(/:/g, '') : value), TaskId),
    tenant: TenantId,
    requestedBy: RequestedBy,
    attestation: Attestation,
  })
  .strict();
export type BatchRequest = z.infer<typeof BatchRequest>;

/**
 * Every partition key that belongs to a tenant (claims, audit chains,
 * approval requests) starts with this, so IAM can confine a tenant's session
 * to its own items with a `dynamodb:LeadingKeys` condition (`k-acme_*`).
 * Tenant ids cannot contain `_`, so no tenant's prefix is a prefix of another's.
 */
export function tenantKeyPrefix(tenant: string): string {
  return `k-${tenant}_`;
}

/** What a malformed key is told: the shape, with an example. */
export const KEY_SHAPE = 'keys look like k-<tenant>_ and 32 hex digits, e.g. k-acme_0123456789abcdef0123456789abcdef';

/** The tenant a key belongs to, read from its prefix. */
export function tenantOfKey(key: string): string | undefined {
  return KEY_PATTERN.test(key) ? key.slice(2, key.lastIndexOf('_')) : undefined;
}

/**
 * Idempotency key = tenant prefix + hash(taskId | tenant | billNo | action).
 * Also the name of the item's guarded-write execution, so Step Functions
 * dedupes it too.
 */
export function idempotencyKey(task: Pick<WriteTask, 'taskId' | 'tenant' | 'billNo' | 'action'>): string {
  // A JSON array keeps field boundaries, so no value can borrow text from its neighbour.
  const digest = createHash('sha256')
    .update(JSON.stringify([task.taskId, task.tenant, task.billNo, task.action]))
    .digest('hex');
  // 128 bits of the digest: as collision-proof as needed, and the name stays within 80 characters for any tenant id.
  return `${tenantKeyPrefix(task.tenant)}${digest.slice(0, 32)}`;
}
