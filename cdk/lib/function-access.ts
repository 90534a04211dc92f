import type { TableDefinition } from '../../src/contracts/table-definitions.js';
import type { WorkflowFunctionName } from '../../src/contracts/functions.js';

/**
 * What each function may touch, in one reviewable table, written from the
 * calls the handlers make (src/app, src/adapters). The constructs turn it into
 * IAM statements; the tests read the synthesized policies back and compare.
 * A handler that starts using something new fails on AWS with AccessDenied
 * until this table says so, on purpose.
 */

export type TableId = TableDefinition['id'];

export type TableAction = 'dynamodb:GetItem' | 'dynamodb:BatchGetItem' | 'dynamodb:PutItem' | 'dynamodb:UpdateItem' | 'dynamodb:Query';

export interface TableAccess {
  actions: readonly TableAction[];
  /** Query on an index needs the index ARN as the resource. */
  indexes?: readonly string[];
  /** dynamodb:Query on these indexes only, not on the table (and none of `actions` on them). */
  queriesIndexes?: readonly string[];
}

export interface FunctionAccess {
  tables: Partial<Record<TableId, TableAccess>>;
  /** PutObject under evidence/ (never Delete, never retention or legal-hold changes). */
  writesEvidence: boolean;
  /**
   * - before-screenshots: GetObject on evidence/…/before.png only (the approval page).
   * - folders: list evidence/ and read objects in it, to build an item's evidence
   *   page, hash its folder into the batch seal and link it from a takeover mail.
   *   Traces stay unreadable: the bucket policy denies them to all but the auditor.
   */
  readsEvidence: 'none' | 'before-screenshots' | 'folders';
  /**
   * The daily digests (src/evidence/digests.ts): list and read anchors/ and digests/, put under digests/ only.
   * Signing them (kms:Sign on the digest key) is granted by the DailyDigests construct, in the key policy too.
   */
  writesDigests: boolean;
  /** A batch's working files under runs/: ReadList writes the item list, Summarize reads the map run's results. */
  batchRunFiles: 'none' | 'writes-items' | 'reads-results';
  /** GetSecretValue on the per-identity vendor credentials (login, API token). */
  readsIdentitySecrets: boolean;
  /** GetSecretValue on the HMAC key that signs approval links. */
  readsApprovalSigningKey: boolean;
  /** GetSecretValue on the HMAC key of requester attestations: entry points make them, routing checks them. */
  readsRequesterKey: boolean;
  /** ses:SendEmail from the configured sender. */
  sendsEmail: boolean;
  /** states:SendTaskSuccess / SendTaskFailure on the guarded-write workflow. */
  answersTaskTokens: boolean;
  /**
   * Acts for one tenant at a time: assumes the tenant-access role (tenant-access.ts) and reaches the
   * tenant's claims, approvals, audit chains, evidence and identity secret only through that session.
   * Such a function's own role holds none of those grants.
   */
  actsForTenant: boolean;
}

export type FunctionName = WorkflowFunctionName | 'approval-http' | 'write-digests' | 'start-scheduled-batch';

const NOTHING: FunctionAccess = {
  tables: {},
  writesEvidence: false,
  readsEvidence: 'none',
  writesDigests: false,
  batchRunFiles: 'none',
  readsIdentitySecrets: false,
  readsApprovalSigningKey: false,
  readsRequesterKey: false,
  sendsEmail: false,
  answersTaskTokens: false,
  actsForTenant: false,
};

/**
 * A step that acts for the item's tenant (credentials in, evidence out, claim fencing, audit, the
 * write's own approval): everything through the tenant session, nothing on the function's role.
 */
const TENANT_STEP: FunctionAccess = { ...NOTHING, actsForTenant: true };

export const FUNCTION_ACCESS: Readonly<Record<FunctionName, FunctionAccess>> = {
  // Reads the tenant's list through a read-only vendor session, looks up which rows already have a claim, writes the item list.
  // It also checks the batch's requester and attests it for each item's execution (the key is on its own role).
  'read-list': { ...TENANT_STEP, readsRequesterKey: true },
  // Not a browser function, but it asks the vendor API who owns the bill, with the identity's API token; checks the requester's attestation.
  // Mails operators.notify when routing fails before any claim (e.g. the vendor ended the session): nothing is claimed to take over.
  'validate-route': { ...TENANT_STEP, readsRequesterKey: true, sendsEmail: true },
  claim: TENANT_STEP,
  // Stores the request and its audit event under the item's tenant session; signs the links and mails them on its own role.
  'request-approval': { ...TENANT_STEP, readsApprovalSigningKey: true, sendsEmail: true },
  snapshot: TENANT_STEP,
  'browser-write': TENANT_STEP,
  readback: TENANT_STEP,
  // Opens and closes a compensation in the item's audit trail (tenant session); the workflow itself starts and waits for the
  // inverse's execution, with the inverse's task as compensate returns it, its requester attested for that execution (own role).
  compensate: { ...TENANT_STEP, readsRequesterKey: true },
  // Closing an item writes its record and evidence page and, when the batch is already sealed, adds it to the seal; an approval
  // that timed out is closed as expired. All of it under the item's tenant session, the batch's claims too (the task index
  // is keyed by the tenant, so the session's LeadingKeys confine it).
  complete: TENANT_STEP,
  // The claim, the queue entry, the record and the seal under the item's tenant session; operators are mailed on its own role.
  takeover: { ...TENANT_STEP, sendsEmail: true },
  // Counts outcomes from the map run's results, writes the batch page and seals the batch folder, under the batch's tenant
  // session; when the summary fails, its SummarizeFailed step mails the operators.
  'summarize-batch': { ...TENANT_STEP, sendsEmail: true },
  // The schedule's entry point: attests the schedule as requester and starts the batch (StartExecution on the batch
  // workflow alone is granted by the BatchSchedules construct, which knows the state machine).
  'start-scheduled-batch': { ...NOTHING, readsRequesterKey: true },
  // Writes and signs each tenant's daily digest from the day's anchors; no table, no evidence folder.
  'write-digests': { ...NOTHING, writesDigests: true },
  // Verifies the signed link on its own role, then reads and decides the request, appends the decision and shows the
  // screenshot under the session of the tenant the signed approval id names; answers the workflow's task token on its own role.
  'approval-http': { ...TENANT_STEP, readsApprovalSigningKey: true, answersTaskTokens: true },
};
