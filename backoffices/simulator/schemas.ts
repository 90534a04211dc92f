import { z } from 'zod';
import { ActiveFaultSchema, AsyncDelayMsSchema, faultSpecSchemaFor, SeedSchema, SessionTtlSecondsSchema } from '../kit/schemas.js';

/**
 * Every shape that crosses the simulator's boundary (startup options, control
 * API bodies, control API answers), as zod schemas with their inferred types.
 * The control client parses answers with the same schemas the server emits.
 */

/** Bill numbers in URLs and fault specs: anything else is a 404 / 400. */
export const BILL_NO_PATTERN = /^[A-Z]+-\d{6}-\d{4}$/;

/** Tenant ids become the letters of bill numbers, so they are lowercase letters only. */
export const TENANT_ID_PATTERN = /^[a-z]{1,20}$/;

export const BILL_STATUSES = ['PENDING', 'PROCESSING', 'PROCESSED', 'REFUNDED'] as const;
export const BILL_KINDS = ['mismatch', 'overcharge'] as const;
/** `revert`: the vendor undid a settled write by itself (the `applied_then_reverted` fault). */
export const JOURNAL_ACTIONS = ['mark', 'unmark', 'refund', 'note', 'revert'] as const;

export const BillStatusSchema = z.enum(BILL_STATUSES);
export const BillKindSchema = z.enum(BILL_KINDS);
export type BillStatus = z.infer<typeof BillStatusSchema>;
export type BillKind = z.infer<typeof BillKindSchema>;

export const TenantIdSchema = z
  .string()
  .regex(TENANT_ID_PATTERN, 'tenant ids are 1-20 lowercase letters (they become the bill number prefix)');
export const BillNoSchema = z.string().regex(BILL_NO_PATTERN, 'bill numbers look like ACME-202611-0001');

const count = (max: number) => z.number().int().min(0).max(max);

export const TenantSpecSchema = z.strictObject({
  id: TenantIdSchema,
  /** Pending bills of kind mismatch. */
  pending: count(3000).optional(),
  /** Pending bills of kind overcharge (the refundable ones). */
  overcharge: count(3000).optional(),
  /** Bills already PROCESSED before the run, by the shared ops account. */
  processed: count(3000).optional(),
  /**
   * The tenant's service account must type a TOTP code after its password (off by default). The code comes
   * from totpSecretFor(tenant) (accounts.ts) with `periodSeconds` per code (30 by default).
   */
  secondFactor: z
    .strictObject({ periodSeconds: z.number().int().min(5, 'periodSeconds is 5-300 (30 is usual)').max(300).optional() })
    .optional(),
});
export type TenantSpec = z.infer<typeof TenantSpecSchema>;

/** Tenant lists: at least one, unique ids, bill numbers must fit in four digits. */
export const TenantListSchema = z
  .array(TenantSpecSchema)
  .min(1, 'give at least one tenant')
  .max(50)
  .superRefine((tenants, ctx) => {
    const seen = new Set<string>();
    tenants.forEach((t, i) => {
      if (seen.has(t.id)) {
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate tenant id "${t.id}"` });
      }
      seen.add(t.id);
      const total = (t.pending ?? 12) + (t.overcharge ?? 1) + (t.processed ?? 3);
      if (total > 9999) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `tenant "${t.id}" would have ${total} bills; bill numbers have four digits (max 9999)`,
        });
      }
    });
  });

export const ResetSpecSchema = z.strictObject({
  seed: SeedSchema.optional(),
  tenants: TenantListSchema.optional(),
  asyncDelayMs: AsyncDelayMsSchema.optional(),
  sessionTtlSeconds: SessionTtlSecondsSchema.optional(),
});
export type ResetSpec = z.infer<typeof ResetSpecSchema>;

export const FaultSpecSchema = faultSpecSchemaFor(BillNoSchema, TenantIdSchema);
export type FaultSpec = z.infer<typeof FaultSpecSchema>;

export const NoteSchema = z.object({
  noteId: z.string(),
  text: z.string(),
  identity: z.string(),
  at: z.string(),
});
export type Note = z.infer<typeof NoteSchema>;

/** One row of a bill's 处理记录: every committed UI submission appends one. */
export const ProcessingRecordSchema = z.object({
  at: z.string(),
  action: z.enum(['mark', 'unmark', 'refund']),
  identity: z.string(),
  via: z.enum(['ui', 'api']),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type ProcessingRecord = z.infer<typeof ProcessingRecordSchema>;

export const BillSchema = z.object({
  billNo: z.string(),
  tenant: z.string(),
  kind: BillKindSchema,
  amountCents: z.number().int(),
  status: BillStatusSchema,
  updatedAt: z.string(),
  notes: z.array(NoteSchema),
  records: z.array(ProcessingRecordSchema),
});
export type Bill = z.infer<typeof BillSchema>;

export const JournalEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  tenant: z.string(),
  billNo: z.string(),
  action: z.enum(JOURNAL_ACTIONS),
  identity: z.string(),
  sessionId: z.string(),
  via: z.enum(['ui', 'api']),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type JournalEntry = z.infer<typeof JournalEntrySchema>;

export {
  ActiveFaultSchema,
  type ActiveFault,
  AsyncDelayMsSchema,
  FAULT_KINDS,
  FaultKindSchema,
  type FaultKind,
  faultSpecSchemaFor,
  SeedSchema,
  SessionTtlSecondsSchema,
  describeIssues,
  type RequestTiming,
  RequestTimingSchema,
  type ResetResult,
  ResetResultSchema,
} from '../kit/schemas.js';

export const SimStateSchema = z.object({
  bills: z.array(BillSchema),
  /** Live sessions: not expired, not revoked. */
  sessions: z.number().int(),
  faults: z.array(ActiveFaultSchema),
});
export type SimState = z.infer<typeof SimStateSchema>;

export const SimulatorOptionsSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  controlToken: z.string().min(1).max(200).optional(),
  seed: SeedSchema.optional(),
  tenants: TenantListSchema.optional(),
  sessionTtlSeconds: SessionTtlSecondsSchema.optional(),
  asyncDelayMs: AsyncDelayMsSchema.optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  /** How long the list page's script waits for a write before showing 请求超时 (default 10000). */
  clientTimeoutMs: z.number().int().min(100).max(120_000).optional(),
  /** `portal`: the work pages show inside a legacy portal's iframe (a top bar, a menu, the work area framed). */
  layout: z.enum(['plain', 'portal']).optional(),
});
export type SimulatorOptions = z.infer<typeof SimulatorOptionsSchema>;
