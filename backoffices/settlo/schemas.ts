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
 * Every shape that crosses Settlo's boundary: start options, control API bodies and answers. The control
 * surface is the one every in-repo back office shares (the same fault kinds and scopes, the same journal
 * fields), plus Settlo's own controls: the undo window, the rate limit and whether the work area may be
 * opened outside its frame.
 */

/** Bill numbers: JS-, the tenant's position (1-9) and four digits, e.g. JS-10001. */
export const BILL_NO_PATTERN = /^JS-[1-9]\d{4}$/;
export const TENANT_ID_PATTERN = /^[a-z]{1,20}$/;

export const BillNoSchema = z.string().regex(BILL_NO_PATTERN, 'Settlo bill numbers look like JS-10001');
export const TenantIdSchema = z.string().regex(TENANT_ID_PATTERN, 'tenant ids are 1-20 lowercase letters');

export const BILL_STATUSES = ['PENDING', 'PROCESSING', 'PROCESSED', 'REFUNDED'] as const;
export const BillStatusSchema = z.enum(BILL_STATUSES);
export type BillStatus = z.infer<typeof BillStatusSchema>;

export const BILL_KINDS = ['mismatch', 'overcharge'] as const;
export const BillKindSchema = z.enum(BILL_KINDS);
export type BillKind = z.infer<typeof BillKindSchema>;

export const SETTLO_ACTIONS = ['settle', 'reopen', 'refund'] as const;
export const SettloActionSchema = z.enum(SETTLO_ACTIONS);
export type SettloAction = z.infer<typeof SettloActionSchema>;

/** How many records of each group a spec makes when it does not say. */
export const DEFAULT_TENANT_COUNTS = { pending: 26, overcharge: 1, processed: 3 } as const;

export const TenantSpecSchema = z.strictObject({
  id: TenantIdSchema,
  /** Display name; default: a 结算中心 name (华东结算中心 for the first tenant, ...). */
  name: z.string().min(1).max(40).optional(),
  /** Pending amount mismatches (处理 with a note; reversible by 撤回). Default 26. */
  pending: recordCount(2000),
  /** Pending overcharges (退款, irreversible). Default 1. */
  overcharge: recordCount(2000),
  /** Already processed mismatches. Default 3. */
  processed: recordCount(2000),
});
export type TenantSpec = z.infer<typeof TenantSpecSchema>;

export const TenantListSchema = specListSchema(TenantSpecSchema, {
  noun: 'tenant',
  max: 9,
  maxMessage: 'at most 9 tenants (the tenant position is the first digit of its bill numbers)',
  counts: DEFAULT_TENANT_COUNTS,
  capacity: 9999,
  overCapacity: (id, total) => `tenant "${id}" would have ${total} bills (max 9999)`,
});

/** The portal's own request limit per signed-in user on its JSON calls: over it, 429 with Retry-After. */
export const RateLimitSchema = z.strictObject({
  /** Requests allowed per window; 0 turns the limit off. */
  max: z.number().int().min(0).max(100_000),
  windowSeconds: z.number().int().min(1).max(3600),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

/** Settlo's own controls, settable at start and by a reset. */
const controls = {
  /** Seconds a 处理/撤回 stays undoable in the page before the page sends it; 0 sends it at once (no undo). */
  undoWindowSeconds: z.number().int().min(0).max(120).optional(),
  rateLimit: RateLimitSchema.optional(),
  /** Whether the work area (/portal/work/...) may be opened outside the portal's frame. Forbidden by default. */
  allowTopLevelWork: z.boolean().optional(),
};

export const SettloResetSpecSchema = z.strictObject({
  ...resetSpecShape,
  tenants: TenantListSchema.optional(),
  ...controls,
});
export type SettloResetSpec = z.infer<typeof SettloResetSpecSchema>;

export const SettloFaultSpecSchema = faultSpecSchemaFor(BillNoSchema, TenantIdSchema);
export type SettloFaultSpec = z.infer<typeof SettloFaultSpecSchema>;

export const BillSchema = z.object({
  billNo: z.string(),
  tenant: z.string(),
  counterparty: z.string(),
  kind: BillKindSchema,
  amountCents: z.number().int(),
  status: BillStatusSchema,
  note: z.string().nullable(),
  updatedAt: z.string(),
});
export type Bill = z.infer<typeof BillSchema>;

/** One committed vendor mutation, in the shape every in-repo back office journals. */
export const SettloJournalEntrySchema = journalEntrySchemaFor(SettloActionSchema, z.literal('ui'));
export type SettloJournalEntry = z.infer<typeof SettloJournalEntrySchema>;

export const SettloStateSchema = z.object({
  bills: z.array(BillSchema),
  ...officeStateShape,
  /** Writes sent to the undo window and neither sent nor undone yet. */
  pendingWrites: z.number().int(),
  controls: z.object({ undoWindowSeconds: z.number(), rateLimit: RateLimitSchema, allowTopLevelWork: z.boolean() }),
});
export type SettloState = z.infer<typeof SettloStateSchema>;

/** Start options: the kit's (page size: grid rows in the paged view), the tenants and Settlo's own controls. */
export const SettloOptionsSchema = z.strictObject({
  ...startOptionsShape,
  tenants: TenantListSchema.optional(),
  ...controls,
});
export type SettloOptions = z.infer<typeof SettloOptionsSchema>;
