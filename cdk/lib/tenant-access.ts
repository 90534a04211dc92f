import { ArnFormat, Lazy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement, Role, type IRole } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  SESSION_TAGS,
  identitySecretName,
  tenantSessionPolicy,
  type PolicyDocument as SessionPolicy,
} from '../../src/contracts/tenant-policy.js';
import type { EvidenceBucket } from './evidence-bucket.js';
import type { WorkingBucket } from './working-bucket.js';
import type { TableId } from './function-access.js';

export interface TenantAccessProps {
  prefix: string;
  tables: Readonly<Record<TableId, ITable>>;
  evidence: EvidenceBucket;
  working: WorkingBucket;
}

/** The session's tenant and identity as IAM policy variables: the role's policy reads them from the session tags. */
const TAGGED_SCOPE = { tenant: `\${aws:PrincipalTag/${SESSION_TAGS.tenant}}`, identity: `\${aws:PrincipalTag/${SESSION_TAGS.identity}}` };

/**
 * The role the functions that act for a tenant assume for each tenant, with
 * session tags (tenant, identity) and the tenant session policy. Its own
 * policy is the same document, written with `${aws:PrincipalTag/…}` where the
 * session policy has the values: only items whose partition key starts with
 * `k-<tenant>_` (dynamodb:LeadingKeys, on the tables and the approvals byKey
 * index), only evidence/<tenant>/, anchors/<tenant>/ and the tenant's batch
 * working files, only the secret of the tagged identity (none without an
 * identity tag). A session without the tenant tag is refused.
 *
 * The trust names the account but admits only the roles of the functions that
 * act for a tenant (aws:PrincipalArn, one entry per grantAssume), each of
 * which must also be allowed sts:AssumeRole and sts:TagSession by its own
 * policy; the request must carry the tenant tag, the identity tag only when
 * the session uses a vendor login, and no other tag.
 */
export class TenantAccess extends Construct {
  readonly role: Role;
  /** The document attached to the role, as synthesized (tokens for the ARNs). */
  readonly policy: SessionPolicy;
  private readonly assumers: IRole[] = [];

  constructor(scope: Construct, id: string, props: TenantAccessProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.policy = tenantSessionPolicy(TAGGED_SCOPE, {
      tables: {
        claims: props.tables.claims.tableArn,
        approvals: props.tables.approvals.tableArn,
        audit: props.tables.audit.tableArn,
        takeover: props.tables.takeover.tableArn,
      },
      bucketArn: props.evidence.bucket.bucketArn,
      workingBucketArn: props.working.bucket.bucketArn,
      evidenceKeyArn: props.evidence.key.keyArn,
      region: stack.region,
      identitySecretArn: (identity) =>
        stack.formatArn({
          service: 'secretsmanager',
          resource: 'secret',
          // Secrets Manager appends six random characters to the name.
          resourceName: `${identitySecretName(props.prefix, identity)}-??????`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
    });
    const tagKeys = [SESSION_TAGS.tenant, SESSION_TAGS.identity];
    const trustConditions = {
      StringLike: { [`aws:RequestTag/${SESSION_TAGS.tenant}`]: '?*' },
      // A session that uses no vendor login (closing, sealing, approvals) carries no identity tag, and so reads no secret.
      StringLikeIfExists: { [`aws:RequestTag/${SESSION_TAGS.identity}`]: '?*' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': tagKeys },
      // Filled in as functions are granted; a role whose ARN is not listed cannot assume, with or without tags.
      ArnEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => this.assumers.map((role) => role.roleArn) }) },
    };
    this.role = new Role(this, 'Role', {
      description: "Tenant-scoped session: one tenant's claims, approvals, audit chains, evidence and identity secret",
      assumedBy: new AccountRootPrincipal().withConditions(trustConditions).withSessionTags(),
      inlinePolicies: { TenantSession: PolicyDocument.fromJson(this.policy) },
    });
  }

  /** Lets a function's role assume the role with session tags (trust and its own policy); it keeps no tenant data grants. */
  grantAssume(role: IRole): void {
    this.assumers.push(role);
    role.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sts:AssumeRole', 'sts:TagSession'], resources: [this.role.roleArn] }),
    );
  }
}
