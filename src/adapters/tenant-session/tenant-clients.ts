import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../contracts/table-definitions.js';
import { tenantSessionRequest, type TenantSessionRequest } from './session-request.js';
import { tenantSessionPolicy, type PolicyDocument, type TenantResources, type TenantScope } from '../../contracts/tenant-policy.js';

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
  const table = (id: 'claims' | 'approvals' | 'audit' | 'takeover') =>
    `arn:${d.partition}:dynamodb:${d.region}:${d.account}:table/${tableName(d.prefix, id)}`;
  return {
    tables: { claims: table('claims'), approvals: table('approvals'), audit: table('audit'), takeover: table('takeover') },
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
 * The local stack's IAM (twin/aws/iam), as a tenant session needs it: the
 * tenant-access role's local ARN, running code as a session assumed with a
 * request (checked as STS would: the caller's policy and the role's trust
 * policy), and checking one action for the current session.
 */
export interface LocalSessions {
  tenantRoleArn: string;
  runAsSession<T>(request: TenantSessionRequest, body: () => T): T;
  authorize(action: string, resource: string): void;
}

type Sendable = { send(command: unknown, ...rest: unknown[]): Promise<unknown> };

/** The client, each call of which runs as the session: the local IAM evaluates it against the tenant-access role with the session's tags. */
function asSession<C extends Sendable>(client: C, request: TenantSessionRequest, sessions: LocalSessions): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'send')
        return (command: unknown, ...rest: unknown[]) => sessions.runAsSession(request, () => target.send(command, ...rest));
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * On the local stack: the process's own clients, each call made as a session
 * of the tenant-access role assumed with the tenant's tags, the same request
 * as on AWS. The local IAM evaluates the role's policy as the template
 * deploys it, with `${aws:PrincipalTag/…}` filled in from those tags.
 */
export function localTenantClients(input: {
  scope: TenantScope;
  deployment: Deployment;
  clients: { db: DynamoDBDocumentClient; s3: S3Client; secretsManager: SecretsManagerClient };
  sessions: LocalSessions;
}): TenantClients {
  const d = input.deployment;
  const request = tenantSessionRequest(input.sessions.tenantRoleArn, input.scope);
  const secretArn = (id: string) =>
    // A stand-in for the six characters AWS appends, so the policy's `-??????` matches as on AWS.
    id.startsWith('arn:') ? id : `arn:${d.partition}:secretsmanager:${d.region}:${d.account}:secret:${id}-LOCAL0`;
  return {
    db: asSession(input.clients.db, request, input.sessions),
    s3: asSession(input.clients.s3, request, input.sessions),
    secretsManager: asSession(input.clients.secretsManager, request, input.sessions),
    policy: tenantSessionPolicy(input.scope, tenantResources(d)),
    authorizeSecretRead: (secretId) =>
      input.sessions.runAsSession(request, () => input.sessions.authorize('secretsmanager:GetSecretValue', secretArn(secretId))),
  };
}
