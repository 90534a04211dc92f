import { z } from 'zod';
import {
  ActiveFaultSchema,
  faultSpecSchemaFor,
  journalEntrySchemaFor,
  officeStateShape,
  recordCount,
  resetSpecShape,
  specListSchema,
  startOptionsShape,
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

/** How many records of each group a spec makes when it does not say. */
export const DEFAULT_ORG_COUNTS = { billingErrors: 6, duplicateCharges: 2, resolved: 2, refunded: 1 } as const;

export const OrgSpecSchema = z.strictObject({
  id: OrgSlugSchema,
  /** Display name; default: the slug capitalised plus "Corp". */
  name: z.string().min(1).max(80).optional(),
  /** Open discrepancies of type billing_error (resolved with a reason; reversible). */
  billingErrors: recordCount(900),
  /** Open discrepancies of type duplicate_charge (refunded; irreversible). */
  duplicateCharges: recordCount(900),
  /** Already resolved billing errors. */
  resolved: recordCount(900),
  /** Already refunded duplicate charges. */
  refunded: recordCount(900),
});
export type OrgSpec = z.infer<typeof OrgSpecSchema>;

export const OrgListSchema = specListSchema(OrgSpecSchema, {
  noun: 'org',
  max: 9,
  maxMessage: 'at most 9 orgs (each org numbers its discrepancies in its own block of 1000)',
  counts: DEFAULT_ORG_COUNTS,
  capacity: 999,
  overCapacity: (id, total) => `org "${id}" would have ${total} discrepancies (max 999)`,
});

/** The kit's reset settings (the async delay: how long a resolve stays "Under review", a refund "Refund pending") and the orgs. */
export const LedgerlyResetSpecSchema = z.strictObject({
  ...resetSpecShape,
  orgs: OrgListSchema.optional(),
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

/**
 * Who/org/record/action and the record's state before and after, for every committed mutation: `tenant` holds
 * the org slug, `billNo` the discrepancy id, `identity` the user's email (named like the bundled simulator's journal).
 */
export const LedgerlyJournalEntrySchema = journalEntrySchemaFor(z.enum(LEDGERLY_ACTIONS), z.literal('ui'));
export type LedgerlyJournalEntry = z.infer<typeof LedgerlyJournalEntrySchema>;

export const LedgerlyStateSchema = z.object({
  discrepancies: z.array(DiscrepancySchema),
  ...officeStateShape,
});
export type LedgerlyState = z.infer<typeof LedgerlyStateSchema>;

/** Start options: the kit's (page size: cards per "Load more") and the orgs. */
export const LedgerlyOptionsSchema = z.strictObject({
  ...startOptionsShape,
  orgs: OrgListSchema.optional(),
});
export type LedgerlyOptions = z.infer<typeof LedgerlyOptionsSchema>;
