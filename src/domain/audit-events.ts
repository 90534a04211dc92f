import { z } from 'zod';
import type { AuditEvent } from './audit-chain.js';
import { PaperclipError } from './errors.js';
import { RoutedItem } from './routing.js';
import { KnownFacts, SourceObservation } from './known-facts.js';

/**
 * Every event type of the audit trail, with the fields of its data: one schema per type, one discriminated union
 * (`AuditEventInput`) that `AuditLog.append` alone accepts, and typed readers (`isEvent`, `eventsOfType`) instead of
 * string compares and casts. docs/evidence.md ("The audit event schema") says what is checked when.
 *
 * Writing: the top level of an event's data is strict (every field named here, no other); values are checked as far
 * as their own schema goes. A bad event is refused before anything is stored, naming the field.
 *
 * Reading: a chain holds whatever was written, in any version of these schemas, and its hashes are over those stored
 * bytes. Reading therefore never rewrites an event: `isEvent` checks an event against its type's schema with every
 * field optional and extra fields allowed, and hands back the stored object itself, typed. An event whose data does
 * not fit (a field of another type in an older shape) or whose type is not listed here is still in the chain, still
 * verified, still shown with its raw data on the item page; no reader takes facts from it.
 *
 * Why no schema here transforms (no defaults, coercions or transforms): the stored object is what is hashed, and a
 * reader gets that object, never a parsed copy, so a schema must describe the data exactly as it is.
 */

const Text = z.string();
export const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lowercase hex');

/** An object a seal records: its name in the folder, its sha256 and size. */
export const SealedObject = z.strictObject({ name: z.string().min(1), sha256: Hex64, bytes: z.number().int().min(0) });
export type SealedObject = z.infer<typeof SealedObject>;

/** One item as a seal records it: its chain's event hashes and its folder's objects. */
export const SealedItem = z.strictObject({
  key: z.string().min(1),
  billNo: z.string().optional(),
  action: z.string().optional(),
  /** Claim status when sealed; absent when the folder has no claim. */
  status: z.string().optional(),
  /** Hash of every event of the item's chain at sealing, seq 1 first. */
  events: z.array(Hex64),
  objects: z.array(SealedObject),
});
export type SealedItem = z.infer<typeof SealedItem>;

/**
 * What a step recorded as its evidence: the objects it stored ({ key, sha256, bytes, contentType }), or, for the
 * takeover queue, plain keys. Extra fields pass (zod's default object), because the evidence readers (item page, folder checksums) read only key and sha256.
 */
const EvidenceEntry = z.union([z.string(), z.object({ key: z.string(), sha256: z.string().optional(), bytes: z.number().optional() })]);
export type EvidenceEntry = z.infer<typeof EvidenceEntry>;
const Evidence = z.array(EvidenceEntry);

/** The routed item as routing made it (routing.ts parses it there); read back field by field, so every field optional. */
const RoutedItemRecord = RoutedItem.partial();

const ClosedData = z.strictObject({ verdict: Text.nullable(), reason: Text.nullable() });
const ApprovalDecidedData = z.strictObject({
  approvalId: Text,
  approver: Text,
  decidedAt: Text,
  requester: Text,
  action: Text,
  billNo: Text,
  amount: Text.nullable(),
  note: Text.nullable(),
  executionArn: Text,
  /** The approver's sign-in (issuer, subject, ID token) when policy required one. */
  signIn: z.object({ issuer: Text, subject: Text, idToken: Text }).nullable(),
});
const CompensationClosedData = z.strictObject({
  inverseKey: Text,
  outcome: Text,
  reason: Text.nullable(),
  executionArn: Text,
  preStatus: Text.nullable(),
  restoredStatus: Text.nullable(),
});
/** A batch's seal (seal.json's hash and counts) in the batch chain. */
const BatchSealedData = z.strictObject({ sealHash: Hex64, seal: Text, items: z.number().int(), objects: z.number().int() });
/** A standalone item's seal in `<key>:seal` (src/evidence/seal.ts): the sealed entry itself and its hash. */
export const StandaloneSealData = z.strictObject({ tenant: Text, taskId: Text, item: SealedItem, sealHash: Hex64 });
/** Items added to a batch's seal after it was written. */
export const ItemSealedData = z.strictObject({ basedOn: Hex64, items: z.array(SealedItem), batchObjects: z.array(SealedObject) });

/** The data schema of every event type, by type. Adding a type here is the only way to append it. */
const DATA = {
  // Routing and the claim
  routed: z.strictObject({ identity: Text, tenant: Text, taskId: Text, executionArn: Text, item: RoutedItemRecord }),
  routing_failed: z.strictObject({ reason: Text, error: Text, taskId: Text, executionArn: Text, nothingWritten: z.literal(true) }),
  claimed: z.strictObject({ owner: Text, version: z.number().int() }),
  claim_taken_over: z.strictObject({ from: Text, owner: Text, version: z.number().int(), status: Text }),
  /** Another key's write on the same item was unresolved: this key's claim moved to BLOCKED before anything was written. */
  blocked: z.strictObject({ openKey: Text, openStatus: Text, reason: Text }),
  // Snapshot
  stale: z.strictObject({ preStatus: Text.optional(), expected: z.array(Text) }),
  pre_state_registered: z.strictObject({
    preStatus: Text,
    source: Text,
    inverse: z.strictObject({ action: Text, targetStatus: Text }).nullable(),
    reversibility: Text,
    evidence: Evidence,
    /** The vendor's own figures the pack names for the action (`approval.show`), as read with the pre-state. */
    figures: z.record(Text, Text).optional(),
  }),
  // Approvals
  approval_requested: z.strictObject({
    approvalId: Text,
    approvers: z.array(Text),
    expiresAt: Text,
    payloadHash: Text.optional(),
    /** The vendor's figures the approvers were shown (from the pre-state read). */
    figures: z.record(Text, Text).optional(),
  }),
  approved: ApprovalDecidedData,
  /** Two writers: an approver's rejection, and the workflow closing an item as rejected (complete.ts). */
  rejected: z.union([ApprovalDecidedData, ClosedData]),
  approval_expired: z.strictObject({ approvalId: Text, expiresAt: Text }),
  approval_not_delivered: z.strictObject({ approvalId: Text, decision: z.enum(['approve', 'reject']), error: Text }),
  /** `claimedByWorkflow` is what the workflow handed over, kept as data: what a forger would have written. */
  approval_not_proven: z.strictObject({ reason: Text, claimedByWorkflow: z.unknown() }),
  // The write
  write_started: z.strictObject({
    tier: z.enum(['api', 'browser']),
    stage: Text.optional(),
    step: z.number().int().optional(),
    /** Set when every stage had already landed: nothing was clicked. */
    alreadyDone: z.array(Text).optional(),
  }),
  write_step: z.strictObject({ tier: z.literal('browser'), stage: Text, step: z.number().int() }),
  stage_already_done: z.strictObject({ stage: Text }),
  /**
   * A stage's done check read (src/domain/stage-proof.ts): before its click (`matched` false: the stage is clicked)
   * or once it committed and settled (`matched` true: the check proved it sees the effect). `earlier` is the stage's
   * mark from an earlier attempt of the write; `decision` what followed.
   */
  stage_done_checked: z.strictObject({
    stage: Text,
    line: Text,
    when: z.enum(['before_click', 'after_commit']),
    matched: z.boolean(),
    earlier: z.enum(['committing', 'seen', 'unseen']).nullable(),
    decision: z.enum(['click', 'skip', 'proceed', 'stop']),
  }),
  /** The action's undo window (undoWindowSeconds) sat out on the page after a stage's last commit click. */
  undo_window_waited: z.strictObject({ stage: Text, undoWindowSeconds: z.number().int(), waitedMs: z.number().int() }),
  /**
   * The requests a stage's commit clicks sent were still unanswered when the wait for them (before anything navigates
   * or closes the page that clicked) ran out: the page may have gone with the write in flight; readback decides.
   */
  commit_requests_unanswered: z.strictObject({ stage: Text, waitedMs: z.number().int(), requests: z.array(Text) }),
  after_pictured: z.strictObject({ settled: z.boolean().nullable(), url: Text }),
  /**
   * The write's vendor-session slot (src/app/session-slots.ts) was found taken by another holder after the commit
   * click: its lease had run out. The write still finished its evidence and readback (stopping after the click would
   * leave a write nobody reads back), but for a while more sessions than `vendor_sessions.max_per_identity` may have
   * acted as the identity. `leaseUntil` is the end of the lease the write last had, `foundAt` when it learned of the loss.
   */
  session_slot_lost: z.strictObject({ slot: z.number().int(), leaseUntil: Text, foundAt: Text, afterCommitClick: z.literal(true) }),
  write_failed: z.strictObject({ committed: z.boolean(), error: Text, message: Text, evidence: Evidence }),
  // Readback and closing
  readback: z.strictObject({
    verdict: Text,
    observed: Text.optional(),
    seen: z.array(Text),
    source: Text,
    next: Text,
    why: Text,
    degraded: z.boolean(),
    evidence: Evidence,
    /** Each source's last reading: the deciding one, the unreadable ones, and one read of the others when not confirmed. */
    sources: z.array(SourceObservation).optional(),
  }),
  completed: ClosedData,
  expired: ClosedData,
  // Takeover
  takeover: z.strictObject({
    reason: Text,
    error: Text.nullable(),
    round: z.number().int(),
    stage: Text.optional(),
    evidence: Evidence,
    /** What the reason says, as fields (src/domain/reason.ts): the commit click, each source's reading, the verdict. */
    known: KnownFacts.optional(),
  }),
  takeover_not_taken: z.strictObject({
    reason: Text,
    error: Text.nullable(),
    claimStatus: Text.nullable(),
    claimOwner: Text.nullable(),
    executionArn: Text,
  }),
  takeover_resolved: z.strictObject({
    as: Text,
    note: Text.optional(),
    round: z.number().int(),
    claimStatus: Text,
    previousOwner: Text,
    previousVersion: z.number().int(),
    version: z.number().int(),
    retryExecutionArn: Text.optional(),
  }),
  takeover_retry_failed: z.strictObject({ error: Text, retryExecutionArn: Text }),
  takeover_retry_finished: z.strictObject({ outcome: Text, reason: Text.nullable(), retryExecutionArn: Text }),
  orphan_resumed: z.strictObject({ deadOwner: Text, ownerStatus: Text, claimStatus: Text, version: z.number().int(), execution: Text }),
  // Compensation
  compensation_started: z.strictObject({
    inverse: Text,
    reason: Text,
    inverseKey: Text,
    preStatus: Text.nullable(),
    requestedBy: Text,
    /** The compensation path's signature over this start (src/domain/requester-attestation.ts). */
    attestation: Text,
  }),
  compensated: CompensationClosedData,
  compensation_failed: CompensationClosedData,
  // Seals
  sealed: z.union([BatchSealedData, StandaloneSealData]),
  item_sealed: ItemSealedData,
} as const;

type DataSchemas = typeof DATA;
export type AuditEventType = keyof DataSchemas;
export const AUDIT_EVENT_TYPES = Object.keys(DATA) as AuditEventType[];

/** The data of an event of type T, as it is appended. */
export type AuditEventData<T extends AuditEventType> = z.infer<DataSchemas[T]>;

/** What `AuditLog.append` accepts: one of the known types, with that type's data. */
export type AuditEventInput = { [T in AuditEventType]: { type: T; actor: string; data: AuditEventData<T> } }[AuditEventType];

/** The union as one zod schema: the type picks the variant, the variant checks actor and data. */
export const AuditEventInputSchema = z.discriminatedUnion(
  'type',
  AUDIT_EVENT_TYPES.map((type) => z.strictObject({ type: z.literal(type), actor: z.string().min(1), data: DATA[type] })) as unknown as [
    z.ZodObject<{ type: z.ZodLiteral<AuditEventType>; actor: z.ZodString; data: z.ZodType }>,
  ],
);

/** An event refused at append: it names the field and what was wrong with it. */
export class AuditEventRejectedError extends PaperclipError {
  override readonly name = 'AuditEventRejectedError';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message, { field });
  }
}

/**
 * Checks an event before it is appended and returns it unchanged (the caller stores and hashes its own object, so
 * checking can never alter what is hashed). Throws AuditEventRejectedError naming the first bad field.
 */
export function checkAuditEventInput(input: unknown): AuditEventInput {
  const type = (input as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !Object.hasOwn(DATA, type)) {
    throw new AuditEventRejectedError(
      `audit event type ${JSON.stringify(type)} is not a known event type; add it to src/domain/audit-events.ts (known: ${AUDIT_EVENT_TYPES.join(', ')})`,
      'type',
    );
  }
  const parsed = AuditEventInputSchema.safeParse(input);
  if (parsed.success) return input as AuditEventInput;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  // An undeclared field is named itself, not its parent object.
  const extra = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const field = [...path, ...(extra === undefined ? [] : [extra])].join('.') || '(event)';
  const problem =
    extra === undefined ? issue.message : `not a field of ${type} events (declare it in src/domain/audit-events.ts, or leave it out)`;
  throw new AuditEventRejectedError(`audit event ${type}: ${field}: ${problem}; the event was not appended`, field);
}

/** A stored event of type T, as a reader sees it: every field of its data optional (older shapes lack some). */
export type StoredEventOf<T extends AuditEventType> = Omit<AuditEvent, 'type' | 'data'> & {
  type: T;
  data: PartialEach<AuditEventData<T>>;
};
/** Partial over each member of a union (a type with two data shapes keeps both). */
type PartialEach<D> = D extends unknown ? Partial<D> : never;

/** The lenient read schema of each type: every field optional, extra fields kept (never stripped: nothing is rewritten). */
const READ: Record<string, z.ZodType> = Object.fromEntries(
  AUDIT_EVENT_TYPES.map((type) => {
    const schema: z.ZodType = DATA[type];
    const lenient = (s: z.ZodType) => (s instanceof z.ZodObject ? s.partial().loose() : s);
    return [type, schema instanceof z.ZodUnion ? z.union((schema.options as z.ZodType[]).map(lenient)) : lenient(schema)];
  }),
);

const readChecked = new WeakMap<object, boolean>();

/** Whether a stored event is of this type and its data fits the type's schema (read leniently); narrows it if so. */
export function isEvent<T extends AuditEventType>(event: AuditEvent | undefined, type: T): event is StoredEventOf<T> {
  if (!event || event.type !== type) return false;
  let fits = readChecked.get(event);
  if (fits === undefined) {
    fits = READ[type]!.safeParse(event.data).success;
    readChecked.set(event, fits);
  }
  return fits;
}

/** The events of one type, in chain order, typed. */
export function eventsOfType<T extends AuditEventType>(events: readonly AuditEvent[], type: T): Array<StoredEventOf<T>> {
  return events.filter((event): event is StoredEventOf<T> => isEvent(event, type));
}

/** Whether the event is any of these types (each read as isEvent reads it); narrows to them if so. */
export function isEventOf<T extends AuditEventType>(event: AuditEvent | undefined, types: readonly T[]): event is StoredEventOf<T> {
  return types.some((type) => isEvent(event, type));
}

/**
 * Whether the event has one of these types, whatever its data: for a check that an event happened at all (a commit,
 * a request), where an event of an older or malformed shape must count like any other. The types are checked by tsc.
 */
export function hasType(event: AuditEvent | undefined, ...types: AuditEventType[]): boolean {
  return event !== undefined && (types as string[]).includes(event.type);
}

/** The event types whose data records the evidence the step stored. */
export const EVIDENCE_EVENT_TYPES = ['pre_state_registered', 'write_failed', 'readback', 'takeover'] as const;

/** The evidence an event recorded (objects stored by a step, or the takeover queue's keys); empty for other events. */
export function evidenceOf(event: AuditEvent): EvidenceEntry[] {
  return isEventOf(event, EVIDENCE_EVENT_TYPES) ? (event.data.evidence ?? []) : [];
}
