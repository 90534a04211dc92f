import { tenantKeyPrefix } from '../domain/task.js';
import { CLAIMS_BY_TENANT_TASK_INDEX } from './table-definitions.js';

/**
 * What a tenant-scoped session may do, as one IAM policy document. The CDK
 * app attaches it to the tenant-access role with policy variables in place of
 * the tenant and identity (`${aws:PrincipalTag/tenant}`); the functions assume
 * that role with the tenant and identity as session tags, and IAM fills the
 * variables in. Locally, the policy guard evaluates the document built with
 * the same values against every call. A session for tenant acme can read only
 * acme's items, acme's evidence and the secret of the identity that acts for acme.
 */

export interface PolicyStatement {
  Sid: string;
  Effect: 'Allow' | 'Deny';
  Action: string[];
  Resource: string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: '2012-10-17';
  Statement: PolicyStatement[];
}

/** Who the session acts as: the tenant, and the service identity whose vendor login it uses (none when it only reads items). */
export interface TenantScope {
  tenant: string;
  identity?: string;
}

/** The ARNs the document names; CDK passes tokens, the runtime passes the deployed values. */
export interface TenantResources {
  tables: { claims: string; approvals: string; audit: string; takeover: string };
  bucketArn: string;
  /** The bucket of the batches' working files (item lists), which is not locked. */
  workingBucketArn: string;
  /** The evidence bucket's key; the session encrypts what it writes and decrypts what it reads through S3 only. */
  evidenceKeyArn: string;
  region: string;
  identitySecretArn(identity: string): string;
}

/** The index the write queries to find its own approval request (by idempotency key). */
export const APPROVALS_BY_KEY_INDEX = 'byKey';

/** The tag keys a tenant session carries; the role's policy reads them as `${aws:PrincipalTag/<key>}`. */
export const SESSION_TAGS = { tenant: 'tenant', identity: 'identity' } as const;

/** Physical name of an identity's secret; the CDK app creates it, the config names it as its secret_id. */
export function identitySecretName(prefix: string, identityId: string): string {
  return `${prefix}/identity/${identityId}`;
}

/** Where a tenant's evidence lives (evidenceKey and batchKey write under it). */
export function tenantEvidencePrefix(tenant: string): string {
  return `evidence/${tenant}/`;
}

/** Where the tenant's seal anchors live (src/evidence/anchor-layout.ts: anchors/<tenant>/<day>/…). */
export function tenantAnchorPrefix(tenant: string): string {
  return `anchors/${tenant}/`;
}

/**
 * The start of the tenant's batch audit chains (src/evidence/folder.ts: batch:<tenant>:<taskId>). Tenant ids
 * cannot contain `:`, so `batch:acme:` is never the start of another tenant's chain.
 */
export function tenantBatchChainPrefix(tenant: string): string {
  return `batch:${tenant}:`;
}

/** The tenant's batch working files: item lists and the Distributed Map's results (runs/<tenant>/<taskId>/<execution>/…). */
export function tenantRunsPrefix(tenant: string): string {
  return `runs/${tenant}/`;
}

/** The item lists of the tenant's batches, which ReadList writes for the Distributed Map. */
export function tenantBatchItemsPattern(tenant: string): string {
  return `runs/${tenant}/*/items.json`;
}

export function tenantSessionPolicy(scope: TenantScope, resources: TenantResources): PolicyDocument {
  const leadingKeys = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${tenantKeyPrefix(scope.tenant)}*`] } };
  const evidence = tenantEvidencePrefix(scope.tenant);
  const runs = tenantRunsPrefix(scope.tenant);
  const statements: PolicyStatement[] = [
    {
      // Claim, fence and close the tenant's items (Complete and Takeover move a claim to its end); hold an item's open
      // write; take, renew and release the identity's vendor session slots (src/domain/session-slots.ts), all keyed
      // under the tenant's prefix.
      Sid: 'OwnClaims',
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      Resource: [resources.tables.claims],
      Condition: leadingKeys,
    },
    {
      // A task's claims (the seal, the summary's re-run outcomes): the index is keyed by the tenant itself.
      Sid: 'OwnTaskClaims',
      Effect: 'Allow',
      Action: ['dynamodb:Query'],
      Resource: [`${resources.tables.claims}/index/${CLAIMS_BY_TENANT_TASK_INDEX}`],
      Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [scope.tenant] } },
    },
    {
      // Item chains (and their standalone seal chains, `<key>:seal`) and the tenant's batch chains, which the seal appends to.
      Sid: 'OwnAuditChains',
      Effect: 'Allow',
      Action: ['dynamodb:Query', 'dynamodb:PutItem'],
      Resource: [resources.tables.audit],
      Condition: {
        'ForAllValues:StringLike': {
          'dynamodb:LeadingKeys': [`${tenantKeyPrefix(scope.tenant)}*`, `${tenantBatchChainPrefix(scope.tenant)}*`],
        },
      },
    },
    {
      // The write proves its own approval: the request by key (the index's partition key), then the request itself.
      // RequestApproval stores the request, the approval page decides it, Complete expires what nobody decided.
      Sid: 'OwnApprovals',
      Effect: 'Allow',
      Action: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      Resource: [resources.tables.approvals, `${resources.tables.approvals}/index/${APPROVALS_BY_KEY_INDEX}`],
      Condition: leadingKeys,
    },
    {
      // Takeover queues the item for a person (the queue is keyed by the idempotency key).
      Sid: 'OwnTakeovers',
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      Resource: [resources.tables.takeover],
      Condition: leadingKeys,
    },
    {
      // GetObjectAttributes gives a stored checksum without the bytes (a seal never reads a trace; the bucket policy denies traces).
      Sid: 'OwnEvidence',
      Effect: 'Allow',
      Action: ['s3:PutObject', 's3:GetObject', 's3:GetObjectAttributes'],
      Resource: [`${resources.bucketArn}/${evidence}*`],
    },
    {
      // A seal is anchored outside the table, under the tenant's anchors only (the digests are another function's).
      Sid: 'OwnSealAnchors',
      Effect: 'Allow',
      Action: ['s3:PutObject'],
      Resource: [`${resources.bucketArn}/${tenantAnchorPrefix(scope.tenant)}*`],
    },
    {
      Sid: 'OwnBatchItems',
      Effect: 'Allow',
      Action: ['s3:PutObject'],
      Resource: [`${resources.workingBucketArn}/${tenantBatchItemsPattern(scope.tenant)}`],
    },
    {
      // Summarize reads the map run's results of the tenant's batch; a failed map run's are found by listing its folder.
      Sid: 'OwnBatchResults',
      Effect: 'Allow',
      Action: ['s3:GetObject'],
      Resource: [`${resources.workingBucketArn}/${runs}*/results/*`],
    },
    {
      Sid: 'ListOwnBatchResults',
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: [resources.workingBucketArn],
      Condition: { StringLike: { 's3:prefix': [`${runs}*/results/*`] } },
    },
    {
      // Reading a key that may not exist yet lists it first (S3 answers 403, not 404, when listing is not allowed).
      Sid: 'ListOwnEvidence',
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: [resources.bucketArn],
      Condition: { StringLike: { 's3:prefix': [`${evidence}*`] } },
    },
    {
      Sid: 'EvidenceKeyThroughS3',
      Effect: 'Allow',
      Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
      Resource: [resources.evidenceKeyArn],
      Condition: { StringEquals: { 'kms:ViaService': `s3.${resources.region}.amazonaws.com` } },
    },
  ];
  if (scope.identity) {
    statements.push({
      Sid: 'OwnIdentitySecret',
      Effect: 'Allow',
      Action: ['secretsmanager:GetSecretValue'],
      Resource: [resources.identitySecretArn(scope.identity)],
    });
  }
  return { Version: '2012-10-17', Statement: statements };
}
