import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../dynamodb/table-definitions.js';
import { guardDocumentClient, guardS3Client, guardSecretsClient, type LocalArns } from './guarded-clients.js';
import { PolicyGuard } from './policy-guard.js';
import { tenantSessionRequest } from './session-request.js';
import { tenantSessionPolicy, type PolicyDocument, type TenantResources, type TenantScope } from './policy.js';

/** The clients a tenant session works with; everything tenant data passes through. */
export interface TenantClients {
  db: DynamoDBDocumentClient;
  s3: S3Client;
  secretsManager: SecretsManagerClient;
  policy: PolicyDocument;
  /** Checks a read of an identity's credentials that does not reach Secrets Manager (inline credentials on the local stack). */
  authorizeSecretRead(secretId: string): void;
}

export interface Deployment {
  partition: string;
  region: string;
  account: string;
  prefix: string;
  bucket: string;
  /** The batches' working files (item lists), apart from the locked evidence. */
  workingBucket: string;
  evidenceKeyArn: string;
  /** The secret id (name or ARN) holding an identity's vendor login. */
  secretIdOf(identity: string): string;
}

const SECRET_SUFFIX_WILDCARD = '-??????';

/** The deployed ARNs the session policy names, from the names the config and the stack share. */
export function tenantResources(d: Deployment): TenantResources {
  const table = (id: 'claims' | 'approvals' | 'audit') =>
    `arn:${d.partition}:dynamodb:${d.region}:${d.account}:table/${tableName(d.prefix, id)}`;
  return {
    tables: { claims: table('claims'), approvals: table('approvals'), audit: table('audit') },
    bucketArn: `arn:${d.partition}:s3:::${d.bucket}`,
    workingBucketArn: `arn:${d.partition}:s3:::${d.workingBucket}`,
    evidenceKeyArn: d.evidenceKeyArn,
    region: d.region,
    identitySecretArn: (identity) => {
      const id = d.secretIdOf(identity);
      // Secrets Manager appends six random characters to a secret's name in its ARN.
      return id.startsWith('arn:')
        ? id
        : `arn:${d.partition}:secretsmanager:${d.region}:${d.account}:secret:${id}${SECRET_SUFFIX_WILDCARD}`;
    },
  };
}

/**
 * On AWS: clients that act under the tenant-access role, assumed with the
 * tenant's session tags. The role's policy is tenantSessionPolicy written with
 * `${aws:PrincipalTag/…}`, which IAM fills from these tags, so the session gets
 * exactly `policy` below, with no inline session policy (see session-request.ts
 * for the STS limits this keeps to). The SDK assumes the role on first use and
 * again before the credentials expire.
 */
export function assumedTenantClients(input: { roleArn: string; scope: TenantScope; deployment: Deployment }): TenantClients {
  const policy = tenantSessionPolicy(input.scope, tenantResources(input.deployment));
  const credentials = fromTemporaryCredentials({
    params: tenantSessionRequest(input.roleArn, input.scope),
    clientConfig: { region: input.deployment.region },
  });
  const region = input.deployment.region;
  return {
    db: DynamoDBDocumentClient.from(new DynamoDBClient({ region, credentials }), { marshallOptions: { removeUndefinedValues: true } }),
    s3: new S3Client({ region, credentials }),
    secretsManager: new SecretsManagerClient({ region, credentials }),
    policy,
    // Every credential read on AWS goes through Secrets Manager, where IAM decides.
    authorizeSecretRead: () => undefined,
  };
}

/**
 * On the local stack: the process's own clients behind the policy guard, which
 * evaluates the same session policy against every call and throws AccessDenied.
 */
export function guardedTenantClients(input: {
  scope: TenantScope;
  deployment: Deployment;
  clients: { db: DynamoDBDocumentClient; s3: S3Client; secretsManager: SecretsManagerClient };
}): TenantClients {
  const d = input.deployment;
  const resources = tenantResources(d);
  const policy = tenantSessionPolicy(input.scope, resources);
  const guard = new PolicyGuard(policy);
  const arns: LocalArns = {
    tableArn: (name) => `arn:${d.partition}:dynamodb:${d.region}:${d.account}:table/${name}`,
    bucketArn: (bucket) => `arn:${d.partition}:s3:::${bucket}`,
    // A stand-in for the six characters AWS appends, so the policy's `-??????` matches as on AWS.
    secretArn: (id) => (id.startsWith('arn:') ? id : `arn:${d.partition}:secretsmanager:${d.region}:${d.account}:secret:${id}-LOCAL0`),
  };
  return {
    db: guardDocumentClient(input.clients.db, guard, d.prefix, arns),
    s3: guardS3Client(input.clients.s3, guard, arns),
    secretsManager: guardSecretsClient(input.clients.secretsManager, guard, arns),
    policy,
    authorizeSecretRead: (secretId) => guard.authorize([{ action: 'secretsmanager:GetSecretValue', resource: arns.secretArn(secretId) }]),
  };
}
