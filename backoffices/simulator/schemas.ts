import { z } from 'zod';
import {
  faultSpecSchemaFor,
  journalEntrySchemaFor,
  officeStateShape,
  recordCount,
  resetSpecShape,
  specListSchema,
  startOptionsShape,
} from '../kit/schemas.js';

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

/** How many records of each group a spec makes when it does not say. */
export const DEFAULT_TENANT_COUNTS = { pending: 12, overcharge: 1, processed: 3 } as const;

export const TenantSpecSchema = z.strictObject({
  id: TenantIdSchema,
  /** Pending bills of kind mismatch. */
  pending: recordCount(3000),
  /** Pending bills of kind overcharge (the refundable ones). */
  overcharge: recordCount(3000),
  /** Bills already PROCESSED before the run, by the shared ops account. */
  processed: recordCount(3000),
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
export const TenantListSchema = specListSchema(TenantSpecSchema, {
  noun: 'tenant',
  max: 50,
  counts: DEFAULT_TENANT_COUNTS,
  capacity: 9999,
  overCapacity: (id, total) => `tenant "${id}" would have ${total} bills; bill numbers have four digits (max 9999)`,
});

export const ResetSpecSchema = z.strictObject({
  ...resetSpecShape,
  tenants: TenantListSchema.optional(),
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

export const JournalEntrySchema = journalEntrySchemaFor(z.enum(JOURNAL_ACTIONS), z.enum(['ui', 'api']));
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
  ...officeStateShape,
});
export type SimState = z.infer<typeof SimStateSchema>;

export const SimulatorOptionsSchema = z.strictObject({
  ...startOptionsShape,
  tenants: TenantListSchema.optional(),
  /** `portal`: the work pages show inside a legacy portal's iframe (a top bar, a menu, the work area framed). */
  layout: z.enum(['plain', 'portal']).optional(),
});
export type SimulatorOptions = z.infer<typeof SimulatorOptionsSchema>;
