import { z } from 'zod';

/**
 * The fields of a reason (src/domain/reason.ts builds and renders them): stored with every takeover reason on
 * the claim, the queue entry, the audit event and record.json. Apart from the builder so the audit event schema
 * can name them without a cycle.
 */

/** Whether the commit click (an API write's commit request) happened: `unknown` when a run died between the claim moving to WRITING and any answer. */
export const CommitClick = z.enum(['not_clicked', 'clicked', 'unknown']);
export type CommitClick = z.infer<typeof CommitClick>;

/** Who read: the page that clicked (`writer`) or an independent readback source (`readback`). */
export const SourceKind = z.enum(['writer', 'readback']);
export type SourceKind = z.infer<typeof SourceKind>;

/**
 * One reading of the item's state: by the write's own page after the click (`write page`, WRITE_PAGE in
 * src/domain/reason.ts), or by a readback source. The write page is never independent evidence (it is the page that
 * clicked, and a vendor may show its writer what nobody else reads): `kind` says which of the two a reading is.
 */
export const SourceObservation = z.object({
  source: z.string().min(1),
  /**
   * `writer` for the write page, `readback` for a readback source. Set on the facts a reason is built from; absent
   * in a readback event's own `sources` and in facts stored before it was typed (then the source name decides).
   */
  kind: SourceKind.optional(),
  /** The status read; absent when the source could not read it (then `error` says why). */
  status: z.string().optional(),
  error: z.string().optional(),
  at: z.string(),
});
export type SourceObservation = z.infer<typeof SourceObservation>;

/**
 * What the observations add up to:
 * - `applied`: the last reading shows the target state;
 * - `applied_then_reverted`: an independent readback source read the target state and a later reading the state
 *   before the write: the vendor took the change and undid it;
 * - `shown_to_writer_not_found`: only the write's own page showed the target state; every readback source read the
 *   state before the write. Whether the vendor took the change and undid it, or only ever showed it to its writer,
 *   is not known: no independent source saw it applied;
 * - `not_applied`: the state before the write, and no reading ever showed the target;
 * - `settled_elsewhere`: a state that is neither the target nor the state before the write;
 * - `sources_disagree`: the readback's source and another source read different states at the end;
 * - `inconclusive`: no settled state was read (interim or unreadable to the deadline);
 * - `not_read`: no readback ran (the item stopped before it, or every source failed).
 */
export const KnownVerdict = z.enum([
  'applied',
  'applied_then_reverted',
  'shown_to_writer_not_found',
  'not_applied',
  'settled_elsewhere',
  'sources_disagree',
  'inconclusive',
  'not_read',
]);
export type KnownVerdict = z.infer<typeof KnownVerdict>;

export const KnownFacts = z.object({
  commitClick: CommitClick,
  /** How many times a commit click was reached for this key (every attempt and round). */
  clicks: z.number().int().min(0),
  /** Every reading in time order: the write page's, then the readbacks' (each source's last reading). */
  observations: z.array(SourceObservation),
  verdict: KnownVerdict,
  targetStatus: z.string().optional(),
  preStatus: z.string().optional(),
});
export type KnownFacts = z.infer<typeof KnownFacts>;

/** A reason: what stopped the item (`headline`: the step's own words) and what is known (`known`), rendered by renderReason. */
export const StructuredReason = z.object({ headline: z.string().min(1), known: KnownFacts });
export type StructuredReason = z.infer<typeof StructuredReason>;
