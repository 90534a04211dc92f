import { z } from 'zod';
import {
  ActiveFaultSchema,
  AsyncDelayMsSchema,
  faultSpecSchemaFor,
  SeedSchema,
  SessionTtlSecondsSchema,
  type FaultKind,
} from '../kit/schemas.js';

/**
 * Every shape that crosses Ledgerly's boundary (startup options, control API
 * bodies and answers). The control surface is the bundled simulator's: the same
 * fault kinds and scopes, the same journal fields (`tenant` holds the org,
 * `billNo` the discrepancy id), so one harness can drive either back office.
 */

/** Discrepancy ids: N- and four to six digits. Anything else in a URL is a 404. */
export const DISCREPANCY_ID_PATTERN = /^N-\d{4,6}$/;
/** Org slugs: lowercase letters, 1-20. */
export const ORG_SLUG_PATTERN = /^[a-z]{1,20}$/;

export const DiscrepancyIdSchema = z.string().regex(DISCREPANCY_ID_PATTERN, 'discrepancy ids look like N-7001');
export const OrgSlugSchema = z.string().regex(ORG_SLUG_PATTERN, 'org slugs are 1-20 lowercase letters');

/** States as the API names them; the UI shows other words (see STATE_TEXT). */
export const DISCREPANCY_STATES = ['open', 'under_review', 'resolved', 'refund_pending', 'refunded'] as const;
export const DiscrepancyStateSchema = z.enum(DISCREPANCY_STATES);
export type DiscrepancyState = z.infer<typeof DiscrepancyStateSchema>;

export const DISCREPANCY_TYPES = ['billing_error', 'duplicate_charge'] as const;
export const DiscrepancyTypeSchema = z.enum(DISCREPANCY_TYPES);
export type DiscrepancyType = z.infer<typeof DiscrepancyTypeSchema>;

export const LEDGERLY_ACTIONS = ['edit', 'resolve', 'reopen', 'refund'] as const;
export type LedgerlyAction = (typeof LEDGERLY_ACTIONS)[number];

const count = (max: number) => z.number().int().min(0).max(max);

export const OrgSpecSchema = z.strictObject({
  id: OrgSlugSchema,
  /** Display name; default: the slug capitalised plus "Corp". */
  name: z.string().min(1).max(80).optional(),
  /** Open discrepancies of type billing_error (resolved with a reason; reversible). */
  billingErrors: count(900).optional(),
  /** Open discrepancies of type duplicate_charge (refunded; irreversible). */
  duplicateCharges: count(900).optional(),
  /** Already resolved billing errors. */
  resolved: count(900).optional(),
  /** Already refunded duplicate charges. */
  refunded: count(900).optional(),
});
export type OrgSpec = z.infer<typeof OrgSpecSchema>;

export const OrgListSchema = z
  .array(OrgSpecSchema)
  .min(1, 'give at least one org')
  .max(9, 'at most 9 orgs (each org numbers its discrepancies in its own block of 1000)')
  .superRefine((orgs, ctx) => {
    const seen = new Set<string>();
    orgs.forEach((o, i) => {
      if (seen.has(o.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate org id "${o.id}"` });
      seen.add(o.id);
      const total = (o.billingErrors ?? 6) + (o.duplicateCharges ?? 2) + (o.resolved ?? 2) + (o.refunded ?? 1);
      if (total > 999) ctx.addIssue({ code: 'custom', path: [i], message: `org "${o.id}" would have ${total} discrepancies (max 999)` });
    });
  });

export const LedgerlyResetSpecSchema = z.strictObject({
  seed: SeedSchema.optional(),
  orgs: OrgListSchema.optional(),
  /** How long a resolved discrepancy stays "Under review" (and a refund "Refund pending"). */
  asyncDelayMs: AsyncDelayMsSchema.optional(),
  sessionTtlSeconds: SessionTtlSecondsSchema.optional(),
});
export type LedgerlyResetSpec = z.infer<typeof LedgerlyResetSpecSchema>;

/** Same kinds and scopes as the bundled simulator; `bill` is a discrepancy id, `tenant` an org slug, `identity` an email. */
export const LedgerlyFaultSpecSchema = faultSpecSchemaFor(DiscrepancyIdSchema, OrgSlugSchema);
export type LedgerlyFaultSpec = z.infer<typeof LedgerlyFaultSpecSchema>;
export type { FaultKind };
export { ActiveFaultSchema };

export const HistoryEventSchema = z.object({
  at: z.string(),
  action: z.enum(LEDGERLY_ACTIONS),
  actor: z.string(),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type HistoryEvent = z.infer<typeof HistoryEventSchema>;

export const DiscrepancySchema = z.object({
  id: z.string(),
  org: z.string(),
  customer: z.string(),
  invoice: z.string(),
  type: DiscrepancyTypeSchema,
  amountCents: z.number().int(),
  state: DiscrepancyStateSchema,
  resolutionReason: z.string().nullable(),
  updatedAt: z.string(),
  history: z.array(HistoryEventSchema),
});
export type Discrepancy = z.infer<typeof DiscrepancySchema>;

/** Who/org/record/action and the record's state before and after, for every committed mutation. */
export const LedgerlyJournalEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  /** The org slug (named `tenant` like the bundled simulator's journal). */
  tenant: z.string(),
  /** The discrepancy id (named `billNo` like the bundled simulator's journal). */
  billNo: z.string(),
  action: z.enum(LEDGERLY_ACTIONS),
  /** The user's email. */
  identity: z.string(),
  sessionId: z.string(),
  via: z.literal('ui'),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type LedgerlyJournalEntry = z.infer<typeof LedgerlyJournalEntrySchema>;

export const LedgerlyStateSchema = z.object({
  discrepancies: z.array(DiscrepancySchema),
  sessions: z.number().int(),
  faults: z.array(ActiveFaultSchema),
});
export type LedgerlyState = z.infer<typeof LedgerlyStateSchema>;

export const LedgerlyOptionsSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  controlToken: z.string().min(1).max(200).optional(),
  seed: SeedSchema.optional(),
  orgs: OrgListSchema.optional(),
  sessionTtlSeconds: SessionTtlSecondsSchema.optional(),
  asyncDelayMs: AsyncDelayMsSchema.optional(),
  /** Cards per page (per "Load more"). */
  pageSize: z.number().int().min(1).max(100).optional(),
  /** How long the app waits for a write before it says the request timed out. */
  clientTimeoutMs: z.number().int().min(100).max(120_000).optional(),
});
export type LedgerlyOptions = z.infer<typeof LedgerlyOptionsSchema>;
