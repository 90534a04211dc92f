import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement, Role, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  SESSION_TAGS,
  identitySecretName,
  tenantSessionPolicy,
  type PolicyDocument as SessionPolicy,
} from '../../src/adapters/tenant-session/policy.js';
import type { EvidenceBucket } from './evidence-bucket.js';
import type { TableId } from './function-access.js';

export interface TenantAccessProps {
  prefix: string;
  tables: Readonly<Record<TableId, ITable>>;
  evidence: EvidenceBucket;
}

/** The session's tenant and identity as IAM policy variables: the role's policy reads them from the session tags. */
const TAGGED_SCOPE = { tenant: `\${aws:PrincipalTag/${SESSION_TAGS.tenant}}`, identity: `\${aws:PrincipalTag/${SESSION_TAGS.identity}}` };

/**
 * The role the functions that act for a tenant assume for each tenant, with
 * session tags (tenant, identity) and the tenant session policy. Its own
 * policy is the same document, written with `${aws:PrincipalTag/…}` where the
 * session policy has the values: only items whose partition key starts with
 * `k-<tenant>_` (dynamodb:LeadingKeys, on the tables and the approvals byKey
 * index), only evidence/<tenant>/ and the tenant's batch item lists, only the
 * secret of the tagged identity. A session without both tags is refused.
 *
 * The trust names the account: only principals whose own policy allows
 * sts:AssumeRole on this role (the tenant functions, see grantAssume) can use it.
 */
export class TenantAccess extends Construct {
  readonly role: Role;
  /** The document attached to the role, as synthesized (tokens for the ARNs). */
  readonly policy: SessionPolicy;

  constructor(scope: Construct, id: string, props: TenantAccessProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.policy = tenantSessionPolicy(TAGGED_SCOPE, {
      tables: { claims: props.tables.claims.tableArn, approvals: props.tables.approvals.tableArn, audit: props.tables.audit.tableArn },
      bucketArn: props.evidence.bucket.bucketArn,
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
    const requireTags = {
      StringLike: { [`aws:RequestTag/${SESSION_TAGS.tenant}`]: '?*', [`aws:RequestTag/${SESSION_TAGS.identity}`]: '?*' },
    };
    this.role = new Role(this, 'Role', {
      description: "Tenant-scoped session: one tenant's claims, approvals, audit chains, evidence and identity secret",
      assumedBy: new AccountRootPrincipal().withConditions(requireTags).withSessionTags(),
      inlinePolicies: { TenantSession: PolicyDocument.fromJson(this.policy) },
    });
  }

  /** Lets a function assume the role with session tags; its own role keeps no tenant data grants. */
  grantAssume(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sts:AssumeRole', 'sts:TagSession'], resources: [this.role.roleArn] }),
    );
  }
}
