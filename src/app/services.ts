import type { PaperclipConfig, Identity } from '../config/schema.js';
import type { SitePack } from '../sitepack/schema.js';
import type { IdentitySessions, IdentitySecret } from '../browser/identity-sessions.js';
import type { TableDefinition } from '../contracts/table-definitions.js';
import type { TenantScope } from '../contracts/tenant-policy.js';
import type { ClaimsPort } from './ports/claims.js';
import type { AuditPort } from './ports/audit.js';
import type { ObjectStore } from './ports/evidence.js';
import type { ApprovalsPort } from './ports/approvals.js';
import type { TakeoverPort } from './ports/takeovers.js';
import type { MailPort } from './ports/mail.js';
import type { ExecutionsPort } from './ports/executions.js';
import type { MapRunsPort } from './ports/map-runs.js';
import type { DigestKeysPort, IdTokensPort, SecretStringsPort } from './ports/keys.js';
import type { VendorApiPort } from './ports/vendor-api.js';
import type { SessionSlotsPort } from './ports/session-slots.js';

/**
 * Everything a workflow step needs, built once per process (a warm Lambda, or
 * the local stack) from the environment. Only endpoints and credentials differ
 * between AWS and the local stack. Each member is a port (src/app/ports/): the
 * app layer sees interfaces; the adapters behind them, and the AWS clients
 * they hold, are built by the composition root (src/composition/services.ts).
 */
export interface Services {
  config: PaperclipConfig;
  pack: SitePack;
  claims: ClaimsPort;
  audit: AuditPort;
  evidence: ObjectStore;
  /** The batches' working files (item lists, map run results) in their own unlocked bucket: not evidence. */
  working: ObjectStore;
  approvals: ApprovalsPort;
  takeovers: TakeoverPort;
  /** Mail from the configured sender (approval requests, takeover notices). */
  mail: MailPort;
  /** Starting and waiting for workflow executions, and answering task tokens. */
  executions: ExecutionsPort;
  /** The batch map run's result files. */
  mapRuns: MapRunsPort;
  /** Plain secrets by id (the approval signing key on AWS). */
  secretStrings: SecretStringsPort;
  /**
   * The key daily digests are signed with: its public half for verify; Sign succeeds only for the digest
   * function's role (on AWS the key policy, locally the local KMS's signer credential).
   */
  digestKeys: DigestKeysPort;
  sessions: IdentitySessions;
  /** The per-identity cap on vendor sessions across processes (config `vendor_sessions`): leases in the claims table. */
  sessionSlots: SessionSlotsPort;
  table(id: TableDefinition['id']): string;
  identity(id: string): Identity;
  secret(identityId: string): Promise<IdentitySecret>;
  vendorApi(identityId: string): Promise<VendorApiPort>;
  /** ARN of the guarded-write state machine, for compensation and operator retries. */
  guardedWriteArn(): string;
  /** The approver sign-in issuer URL (the embedded provider's address locally); undefined without sign-in. */
  signInIssuer(): string | undefined;
  /** Checks an approver's ID token against the issuer's published keys (cached per process). */
  idTokens: IdTokensPort;
  /** Closes the AWS clients' sockets (a CLI command that is done). */
  close(): void;
  /**
   * The same services under the tenant's session: its claims, approvals and
   * audit chains, its evidence prefix and its identity's secret, nothing else
   * (docs/deploy.md, "Tenant isolation in IAM"). On AWS an assumed role with
   * session tags; locally a session of the same role, as the template deploys
   * it, evaluated by the local IAM on every call.
   */
  forTenant(scope: TenantScope): Services;
}

let current: Services | undefined;
let create: (() => Services) | undefined;

/**
 * The process-wide services; a warm Lambda reuses them across invocations. Built on first use by the factory
 * the composition root provided (src/composition/lambda.ts, which every Lambda entry point imports).
 */
export function services(): Services {
  if (!current) {
    if (!create) {
      throw new Error(
        'no services here: a Lambda entry point imports src/composition/lambda.ts, and a runtime that builds its own calls useServices',
      );
    }
    current = create();
  }
  return current;
}

/** Replaces the process-wide services (the local stack builds them from its own endpoints). */
export function useServices(next: Services | undefined): void {
  current = next;
}

/** How the process-wide services are built on first use: given by the composition root, never by the app layer. */
export function provideServices(factory: () => Services): void {
  create = factory;
}
