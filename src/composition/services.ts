/**
 * The composition root: the one place that builds the adapters (AWS clients, stores, mail, executions, keys)
 * and the browser sessions, and hands them to the app layer as the ports of `Services` (src/app/services.ts).
 * Entry points come here: the Lambda handlers (through ./lambda.ts), the CLI, the embedded runtime. The import
 * rules (.dependency-cruiser.mjs) let only this folder import src/adapters.
 */
import { z } from 'zod';
import type { Services } from '../app/services.js';
import { loadRuntime } from '../config/runtime.js';
import { workingBucketName } from '../config/schema.js';
import { parseOrThrow } from '../config/errors.js';
import { ClaimsStore } from '../adapters/dynamodb/claims-store.js';
import { paceAccount, paceFor } from '../lib/request-pace.js';
import { SessionSlotsStore } from '../adapters/dynamodb/session-slots-store.js';
import { InProcessSessionSlots } from '../adapters/in-process/session-slots.js';
import { AuditLog } from '../adapters/dynamodb/audit-log.js';
import { tableName } from '../contracts/table-definitions.js';
import { EvidenceStore } from '../adapters/s3/evidence-store.js';
import { MapRunResults } from '../adapters/s3/map-run-results.js';
import { ApprovalsStore } from '../adapters/dynamodb/approvals-store.js';
import { TakeoverStore } from '../adapters/dynamodb/takeover-store.js';
import { Mailer } from '../adapters/ses/mailer.js';
import { Executions } from '../adapters/sfn/executions.js';
import { SecretStrings } from '../adapters/secrets/secret-strings.js';
import { createAwsClients, destroyAwsClients, type AwsClients } from '../adapters/aws-clients.js';
import { DigestKeys } from '../adapters/kms/digest-keys.js';
import { digestKeyAlias } from '../contracts/functions.js';
import { IdentitySecrets } from '../adapters/secrets/identity-secrets.js';
import { VendorApi } from '../adapters/vendor/vendor-api.js';
import { IdTokenVerifier } from '../adapters/oidc/id-token-verifier.js';
import { IdentitySessions } from '../browser/identity-sessions.js';
import { sharedBrowser } from '../browser/chromium.js';
import { identitySecretName, type TenantScope } from '../contracts/tenant-policy.js';
import {
  assumedTenantClients,
  localTenantClients,
  type Deployment,
  type LocalSessions,
  type TenantClients,
} from '../adapters/tenant-session/tenant-clients.js';

/**
 * Services with the AWS clients under them, for what wires and inspects a
 * stack (the embedded runtime, CLI tools, tests): never handed to the app layer.
 */
export interface WiredServices extends Services {
  clients: AwsClients;
}

const Environment = z.object({
  PAPERCLIP_CONFIG: z.string().min(1, 'set PAPERCLIP_CONFIG to the config YAML path').default('config/paperclip.local.yaml'),
  PAPERCLIP_VENDOR_BASE_URL: z.string().url().optional(),
  PAPERCLIP_AWS_REGION: z.string().optional(),
  PAPERCLIP_DYNAMODB_ENDPOINT: z.string().url().optional(),
  PAPERCLIP_S3_ENDPOINT: z.string().url().optional(),
  PAPERCLIP_SES_ENDPOINT: z.string().url().optional(),
  PAPERCLIP_SFN_ENDPOINT: z.string().url().optional(),
  PAPERCLIP_SECRETS_ENDPOINT: z.string().url().optional(),
  PAPERCLIP_KMS_ENDPOINT: z.string().url().optional(),
  /** The digest signing key (its ARN on AWS, set by the CDK app); default alias/<prefix>-digests. */
  PAPERCLIP_DIGEST_KEY_ID: z.string().min(1).optional(),
  /**
   * The local KMS's signer credential, given only to the digest writer (`<access key id>:<secret>`). Unset on AWS,
   * where the function's role is the credential.
   */
  PAPERCLIP_KMS_SIGNER: z
    .string()
    .regex(/^[A-Z0-9]{16,}:\S+$/, 'set PAPERCLIP_KMS_SIGNER to <access key id>:<secret> of the local KMS signer')
    .optional(),
  PAPERCLIP_GUARDED_WRITE_ARN: z.string().startsWith('arn:').optional(),
  /** Where approval links point when it is only known at deploy or start time (a Function URL, the local server). */
  PAPERCLIP_APPROVAL_BASE_URL: z.string().url().optional(),
  /** The embedded OpenID provider's address, for `approvals.sign_in.issuer: embedded`. */
  PAPERCLIP_SIGN_IN_ISSUER: z.string().url().optional(),
  /** The app client approvers sign in with, when the deployment created it (a Cognito user pool client on AWS). */
  PAPERCLIP_SIGN_IN_CLIENT_ID: z.string().min(1).optional(),
  /** The tenant-access role the tenant-scoped functions assume; unset on the local stack, where the local IAM stands in for STS. */
  PAPERCLIP_TENANT_ROLE_ARN: z
    .string()
    .regex(/^arn:[a-z-]+:iam::\d{12}:role\//, 'set PAPERCLIP_TENANT_ROLE_ARN to an IAM role ARN')
    .optional(),
  /** The evidence bucket's KMS key, which the tenant session policy names. */
  PAPERCLIP_EVIDENCE_KEY_ARN: z.string().startsWith('arn:').optional(),
});

/** Locally there is no account; ARNs in the local policy use this one. */
const LOCAL_ACCOUNT = '000000000000';

/**
 * The local stack's IAM (twin/aws/iam/enforce.ts): it evaluates every call of
 * the clients it is attached to against the deployed policies of whoever
 * calls, and stands in for STS when a function acts for a tenant.
 */
export interface LocalIamPort extends LocalSessions {
  /** Adds the evaluation to an AWS SDK client's middleware stack. */
  attach(client: object): void;
}

export interface ServiceOptions {
  /** The embedded stack's IAM; without it (and without PAPERCLIP_TENANT_ROLE_ARN) there are no tenant sessions. */
  localIam?: LocalIamPort;
  /**
   * Where the vendor session slots are kept: the claims table (default; every deployment and the embedded stack), or
   * this process alone, for a command that runs without the tables (`sitepack probe`).
   */
  sessionSlots?: 'table' | 'in-process';
}

export function createServices(env: NodeJS.ProcessEnv = process.env, options: ServiceOptions = {}): WiredServices {
  const vars = parseOrThrow(Environment, env, 'environment');
  const { config, sitePack } = loadRuntime(vars.PAPERCLIP_CONFIG, { vendorBaseUrl: vars.PAPERCLIP_VENDOR_BASE_URL });
  if (vars.PAPERCLIP_APPROVAL_BASE_URL) config.approvals.base_url = vars.PAPERCLIP_APPROVAL_BASE_URL;
  if (vars.PAPERCLIP_SIGN_IN_CLIENT_ID && config.approvals.sign_in) config.approvals.sign_in.client_id = vars.PAPERCLIP_SIGN_IN_CLIENT_ID;
  const region = vars.PAPERCLIP_AWS_REGION ?? config.region;
  const clients = createAwsClients(
    region,
    {
      dynamodb: vars.PAPERCLIP_DYNAMODB_ENDPOINT,
      s3: vars.PAPERCLIP_S3_ENDPOINT,
      ses: vars.PAPERCLIP_SES_ENDPOINT,
      sfn: vars.PAPERCLIP_SFN_ENDPOINT,
      secrets: vars.PAPERCLIP_SECRETS_ENDPOINT,
      kms: vars.PAPERCLIP_KMS_ENDPOINT,
    },
    signerCredential(vars.PAPERCLIP_KMS_SIGNER),
  );
  // Every call these clients make is evaluated against the caller's deployed policies (docs/local-stack.md).
  for (const client of [clients.db, clients.s3, clients.ses, clients.sfn, clients.secretsManager]) options.localIam?.attach(client);
  const table = (id: Parameters<typeof tableName>[1]) => tableName(config.prefix, id);
  const identity = (id: string) => {
    const found = config.identities.find((i) => i.id === id);
    if (!found) throw new Error(`identity ${id} is not configured`);
    return found;
  };
  const roleArn = vars.PAPERCLIP_TENANT_ROLE_ARN;
  const deployment: Deployment = {
    partition: roleArn?.split(':')[1] ?? 'aws',
    region,
    account: roleArn?.split(':')[4] ?? LOCAL_ACCOUNT,
    prefix: config.prefix,
    bucket: config.evidence.bucket,
    workingBucket: workingBucketName(config.evidence),
    evidenceKeyArn: vars.PAPERCLIP_EVIDENCE_KEY_ARN ?? `arn:aws:kms:${region}:${LOCAL_ACCOUNT}:key/local`,
    secretIdOf: (id) => {
      const credentials = identity(id).credentials;
      return credentials.source === 'secrets_manager' ? credentials.secret_id : identitySecretName(config.prefix, id);
    },
  };
  // What does not depend on whose credentials act: mail and executions go through the function's own role.
  const shared = {
    config,
    pack: sitePack,
    mail: new Mailer(clients.ses, config.approvals.sender),
    executions: new Executions(clients.sfn),
    // The function's own keys (approval signing, requester attestation): not tenant data, so never through a tenant session.
    secretStrings: new SecretStrings(clients.secretsManager),
    sessions: new IdentitySessions(sharedBrowser, sitePack, config.vendor.base_url),
    idTokens: new IdTokenVerifier(),
    table,
    identity,
    guardedWriteArn() {
      if (!vars.PAPERCLIP_GUARDED_WRITE_ARN) throw new Error('set PAPERCLIP_GUARDED_WRITE_ARN to the guarded-write state machine ARN');
      return vars.PAPERCLIP_GUARDED_WRITE_ARN;
    },
    signInIssuer() {
      const issuer = config.approvals.sign_in?.issuer;
      if (!issuer) return undefined;
      // The deployment's own issuer (the embedded provider locally, the stack's user pool on AWS) comes with the environment.
      if (vars.PAPERCLIP_SIGN_IN_ISSUER) return vars.PAPERCLIP_SIGN_IN_ISSUER;
      if (issuer !== 'embedded') return issuer;
      if (!vars.PAPERCLIP_SIGN_IN_ISSUER)
        throw new Error('approvals.sign_in.issuer is embedded but no embedded provider runs here (PAPERCLIP_SIGN_IN_ISSUER is unset)');
      return vars.PAPERCLIP_SIGN_IN_ISSUER;
    },
    digestKeys: new DigestKeys(
      clients.kms,
      vars.PAPERCLIP_DIGEST_KEY_ID ?? digestKeyAlias(config.prefix),
      config.evidence.digest_public_key,
    ),
    close() {
      destroyAwsClients(clients);
    },
  };

  const processSlots = options.sessionSlots === 'in-process' ? new InProcessSessionSlots() : undefined;

  /** The stores and credentials built on one set of data clients: the process's own, or a tenant session's. */
  const assemble = (
    data: Pick<TenantClients, 'db' | 's3' | 'secretsManager'>,
    authorizeSecretRead: (secretId: string) => void,
  ): Services => {
    const secrets = new IdentitySecrets(data.secretsManager);
    const secret = async (id: string) => {
      authorizeSecretRead(deployment.secretIdOf(id));
      return secrets.resolve(identity(id));
    };
    return {
      ...shared,
      claims: new ClaimsStore(data.db, table('claims')),
      // In the claims table under the tenant's key prefix: a tenant session reaches its own tenant's slots only.
      sessionSlots: processSlots ?? new SessionSlotsStore(data.db, table('claims')),
      audit: new AuditLog(data.db, table('audit')),
      evidence: new EvidenceStore(data.s3, config.evidence.bucket),
      working: new EvidenceStore(data.s3, workingBucketName(config.evidence)),
      approvals: new ApprovalsStore(data.db, table('approvals')),
      takeovers: new TakeoverStore(data.db, table('takeover')),
      mapRuns: new MapRunResults(data.s3),
      secret,
      async vendorApi(identityId: string) {
        const { username, password, apiToken } = await secret(identityId);
        // The API reads keep the identity's pace with its browser sessions in this process: the vendor counts the account.
        const pace = sitePack.pace ? paceFor(paceAccount(config.vendor.base_url, username), sitePack.pace) : undefined;
        if (sitePack.api?.auth === 'cookie' && sitePack.api.login) {
          return new VendorApi(config.vendor.base_url, sitePack, { kind: 'login', username, password }, undefined, pace);
        }
        if (!apiToken) throw new Error(`identity ${identityId} has no API token`);
        return new VendorApi(config.vendor.base_url, sitePack, { kind: 'token', token: apiToken }, undefined, pace);
      },
      forTenant,
    };
  };

  // One session per tenant and identity per process: a warm Lambda reuses the assumed role's credentials.
  const tenantSessions = new Map<string, Services>();
  function forTenant(scope: TenantScope): Services {
    const id = `${scope.tenant}/${scope.identity ?? ''}`;
    let scoped = tenantSessions.get(id);
    if (!scoped) {
      const sessions = options.localIam;
      if (!roleArn && !sessions) {
        throw new Error(
          `no tenant session for ${scope.tenant}: set PAPERCLIP_TENANT_ROLE_ARN to the tenant-access role, ` +
            'or run on the embedded stack, whose IAM stands in for STS',
        );
      }
      const data = roleArn
        ? assumedTenantClients({ roleArn, scope, deployment })
        : localTenantClients({ scope, deployment, clients, sessions: sessions! });
      scoped = assemble(data, data.authorizeSecretRead);
      tenantSessions.set(id, scoped);
    }
    return scoped;
  }

  return { ...assemble(clients, () => undefined), clients };
}

function signerCredential(value: string | undefined) {
  if (!value) return undefined;
  const at = value.indexOf(':');
  return { accessKeyId: value.slice(0, at), secretAccessKey: value.slice(at + 1) };
}
