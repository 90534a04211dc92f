import { MAX_SLOT_WAIT_SECONDS } from '../contracts/sizing.js';
import { z } from 'zod';
import { ReadbackSource, Tier } from '../sitepack/schema.js';

/**
 * Paperclip's configuration: who may act for which tenant, which actions are
 * enabled and how writes are policed. Policy lives here, not in code.
 */

const Id = z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'ids are lower-kebab-case (a-z, 0-9, -)');
const ActionName = z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'action names are lower_snake_case');

/**
 * A TOTP secret as vendors hand it out at enrolment: base32 (spaces, as some show it in groups of four, are
 * dropped). At least 16 characters (80 bits), the RFC 4226 minimum.
 */
export const TotpSecret = z
  .string()
  .transform((s) => s.replace(/\s+/g, '').toUpperCase())
  .pipe(
    z
      .string()
      .regex(/^[A-Z2-7]+=*$/, 'totp_secret is the base32 secret of the enrolment (letters A-Z and digits 2-7), not a code or a URL')
      .min(16, 'totp_secret is at least 16 base32 characters (the enrolment secret, not a 6-digit code)'),
  );

const Credentials = z.discriminatedUnion('source', [
  z
    .object({
      source: z.literal('inline'),
      username: z.string().min(1),
      password: z.string().min(1),
      api_token: z.string().min(1).optional(),
      /** The identity's second factor, for a site pack with login.secondFactor. */
      totp_secret: TotpSecret.optional(),
    })
    .strict(),
  z
    .object({
      source: z.literal('secrets_manager'),
      /** Secret holding {"username","password","apiToken","totpSecret"} for this identity only (the last two optional). */
      secret_id: z.string().min(1),
    })
    .strict(),
]);
export type Credentials = z.infer<typeof Credentials>;

export const Identity = z
  .object({
    id: Id,
    /** Tenants this identity may act for; anything else is refused at routing. */
    tenants: z.array(Id).min(1),
    credentials: Credentials,
  })
  .strict();
export type Identity = z.infer<typeof Identity>;

export const Tenant = z
  .object({
    id: Id,
    display_name: z.string().min(1).optional(),
    /** The service identity batches of this tenant run as. */
    identity: Id,
    /** Who may approve irreversible actions for this tenant (emails). */
    approvers: z.array(z.string().email('approvers are email addresses')).default([]),
    /** Which site-pack action a pending item of each kind gets. */
    actions_by_kind: z.record(z.string(), ActionName).default({}),
    /** Which action an item in each status gets (checked before the kind). */
    actions_by_status: z.record(z.string().regex(/^[A-Z][A-Z_]{0,30}$/, 'status codes are UPPER_SNAKE_CASE'), ActionName).default({}),
    /** The action of an item that neither its status nor its kind maps. */
    default_action: ActionName.optional(),
    /**
     * Values the site pack's steps use for this tenant besides its id, e.g. the
     * organisation to pick in the vendor's org selector ({{org}}).
     */
    site_params: z
      .record(z.string().regex(/^[a-z][a-zA-Z0-9_]{0,40}$/, 'site_params names are identifiers'), z.string().max(200))
      .default({}),
    /** Parameters for actions that need more than the item, e.g. a refund reason. */
    action_params: z.record(ActionName, z.record(z.string(), z.string())).default({}),
  })
  .strict();
export type Tenant = z.infer<typeof Tenant>;

export const ActionPolicy = z
  .object({
    /** Safe to write again after a settled, negative readback (e.g. error_500 before commit). */
    retry_after_negative_readback: z.boolean().default(false),
    max_write_attempts: z.number().int().min(1).max(3).default(1),
  })
  .strict();
export type ActionPolicy = z.infer<typeof ActionPolicy>;

export const WritePolicy = z
  .object({
    require_readback: z.literal(true, {
      error: 'require_readback must be true: a write without readback can report false success',
    }),
    readback_sources: z.array(ReadbackSource).min(1),
    forbid_visual_verdict: z.literal(true, { error: 'forbid_visual_verdict must be true: screenshots are evidence, not verdicts' }),
    approval_required: z.array(ActionName).default([]),
    /** Irreversible actions deliberately run without approval, each with the reason. */
    irreversible_without_approval: z.record(ActionName, z.string().min(10, 'give a reason of at least a sentence')).default({}),
    approval_timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .default(3600),
    readback_deadline_ms: z.number().int().min(500).max(600_000).default(20_000),
    readback_poll_ms: z.number().int().min(50).max(60_000).default(400),
    /** How long a claim lease lasts before another runner may inspect (never re-click) it. */
    claim_lease_seconds: z.number().int().min(10).max(3600).default(300),
  })
  .strict();
export type WritePolicy = z.infer<typeof WritePolicy>;

/**
 * Approver sign-in (OpenID Connect) on the approval pages. Where policy requires
 * it, the signed link only shows the request: the decision needs the approver
 * named on the link signed in with the identity provider. See docs/approvals.md.
 */
/** Where the identity provider sends approvers back: the redirect URI registered with it (locally and in Cognito). */
export const SIGN_IN_CALLBACK_PATH = '/auth/callback';

export const ApproverSignIn = z
  .object({
    /**
     * The OpenID issuer: `embedded` for the provider the local stack starts (its users
     * under embedded_users), or the issuer URL (a Cognito user pool:
     * https://cognito-idp.<region>.amazonaws.com/<pool id>).
     */
    issuer: z.union([z.literal('embedded'), z.url({ protocol: /^https$/, error: 'sign_in.issuer is embedded or an https issuer URL' })]),
    /** The app client; a public client (no secret): PKCE binds the code to the browser that signed in. */
    client_id: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'sign_in.client_id is the identity provider app client id'),
    /** Which requests need a signed-in approver: any listed action, or any amount above the threshold. */
    required_for: z
      .object({
        actions: z.array(ActionName).default([]),
        /** A decimal such as "1000" or "1000.00"; a request whose amount is above it needs sign-in. */
        amount_above: z
          .string()
          .regex(/^\d{1,12}(\.\d{1,2})?$/, 'amount_above is a decimal such as "1000.00"')
          .optional(),
      })
      .strict()
      .default({ actions: [] }),
    /** How long a sign-in lasts on the approval pages. */
    session_minutes: z.number().int().min(1).max(720).default(30),
    /** Users of the embedded provider (local stack only), each an approver's email and a password. */
    embedded_users: z
      .array(
        z
          .object({
            email: z.string().toLowerCase().pipe(z.email('embedded_users[].email is an email address')),
            password: z.string().min(8, 'embedded_users[].password is at least 8 characters'),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();
export type ApproverSignIn = z.infer<typeof ApproverSignIn>;

export const PaperclipConfig = z
  .object({
    environment: z.enum(['local', 'aws']),
    /** Prefix of every table, function and state machine name. */
    prefix: Id,
    region: z.string().min(1).default('us-east-1'),
    vendor: z
      .object({
        site_pack: z.string().min(1),
        base_url: z.string().url('vendor.base_url must be a URL such as https://vendor.example.com'),
      })
      .strict(),
    identities: z.array(Identity).min(1),
    tenants: z.array(Tenant).min(1),
    actions: z.record(ActionName, ActionPolicy),
    tool_ladder: z.array(Tier).min(1),
    write_policy: WritePolicy,
    evidence: z
      .object({
        bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{2,62}$/, 'S3 bucket names are 3-63 lower-case letters, digits, dots, hyphens'),
        /**
         * The batches' working files (the item list ReadList writes, the map run's results): not evidence, so
         * kept apart from the locked evidence bucket. Default: workingBucketName() of `bucket`.
         */
        working_bucket: z
          .string()
          .regex(/^[a-z0-9][a-z0-9.-]{2,62}$/, 'S3 bucket names are 3-63 lower-case letters, digits, dots, hyphens')
          .optional(),
        retention_days: z.number().int().min(1).default(365),
        /**
         * Record a Playwright trace of every browser write (the trace is part of
         * the write's evidence). Only a local stack may turn it off, e.g. to
         * measure what the trace costs; on AWS it must stay on.
         */
        write_trace: z.boolean().default(true),
        /**
         * When the independent readback pictures the page it read its verdict from. `when_needed`: unless the
         * verdict is confirmed, not degraded, and follows a browser write that returned with its after picture
         * showing the settled target state; so every verdict a person will look into, every write that failed,
         * timed out or was resumed after a crash, and every write without a settled after picture keeps it. A
         * confirmed readback after a settled write is recorded by its observations in the audit chain, and its
         * page shows the after picture's settled row. `always`: every readback (one more capture per item).
         */
        readback_picture: z.enum(['when_needed', 'always']).default('when_needed'),
        /**
         * When a browser write pictures the page just before its commit click. `when_needed`: for an irreversible
         * action, a write that needed approval, and any write without a trace; a traced reversible write without
         * approval keeps the trace's DOM snapshot of the commit click instead, which shows the same page (and the
         * write can be undone). `always`: every browser write (one more capture per item).
         */
        before_commit_picture: z.enum(['when_needed', 'always']).default('when_needed'),
        /**
         * The public key daily digests are checked with (PEM, SPKI), pinned by an auditor who does not want
         * `audit verify` to ask the account's KMS for it (GetPublicKey). Omitted: verify asks KMS for the
         * public half of the digest key (docs/evidence.md, "Daily digests").
         */
        digest_public_key: z
          .string()
          .regex(
            /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\s*$/,
            'paste the PEM public key (-----BEGIN PUBLIC KEY-----)',
          )
          .optional(),
      })
      .strict(),
    approvals: z
      .object({
        /** Public base URL of the approval pages (the link in the email). */
        base_url: z.string().url(),
        sender: z.string().email(),
        /**
         * Whether a+tag@example.com is the same person as a@example.com when checking
         * self-approval and the approver allow-list (see docs/approvals.md).
         */
        plus_addressing: z.enum(['same_mailbox', 'distinct']).default('same_mailbox'),
        sign_in: ApproverSignIn.optional(),
        signing_secret: z.discriminatedUnion('source', [
          z.object({ source: z.literal('inline'), value: z.string().min(32, 'signing secrets are at least 32 characters') }).strict(),
          z.object({ source: z.literal('secrets_manager'), secret_id: z.string().min(1) }).strict(),
        ]),
      })
      .strict(),
    /**
     * Who asked for a write is taken from the entry point that started it, never from the task body
     * (docs/approvals.md, "Who asked"): each entry point attests the requester with this key, and routing checks it.
     */
    requesters: z
      .object({
        /** HMAC key of requester attestations; locally it may be left out (derived from the inline approval signing secret). */
        attestation_secret: z
          .discriminatedUnion('source', [
            z.object({ source: z.literal('inline'), value: z.string().min(32, 'attestation secrets are at least 32 characters') }).strict(),
            z.object({ source: z.literal('secrets_manager'), secret_id: z.string().min(1) }).strict(),
          ])
          .optional(),
        /** The requester the CLI names (e.g. operator:alice or alice@acme.example); default operator:<OS user>. */
        operator: z.string().min(1).max(200).optional(),
        /** Whether the CLI's --requested-by may name someone else; off unless set. */
        allow_requested_by_flag: z.boolean().default(false),
      })
      .strict()
      .default({ allow_requested_by_flag: false }),
    operators: z
      .object({ notify: z.array(z.string().email()).default([]) })
      .strict()
      .default({ notify: [] }),
    limits: z
      .object({
        max_batch_items: z.number().int().min(1).max(10_000).default(500),
        max_concurrency: z.number().int().min(1).max(40).default(2),
        max_task_bytes: z.number().int().min(256).max(256_000).default(8192),
        /**
         * Share of a batch's item executions that may fail (an unexpected fault: a guarded write's own
         * failures end as an 'error' result, not a failed item) before the batch stops starting more.
         */
        tolerated_failure_percentage: z.number().min(0).max(100).default(0),
      })
      .strict()
      .default({ max_batch_items: 500, max_concurrency: 2, max_task_bytes: 8192, tolerated_failure_percentage: 0 }),
    /**
     * Browser sessions open at once as one identity for one tenant, across every batch, re-run, compensation and
     * retry (docs/deploy.md, "Vendor sessions per identity"): each task takes one of the identity's slots (a lease in
     * the claims table) before it logs in or uses a context, and gives it back after.
     */
    vendor_sessions: z
      .object({
        /** The vendor's limit on simultaneous logins of one user (many end older sessions, or rate-limit logins). */
        max_per_identity: z
          .number({ error: 'vendor_sessions.max_per_identity must be a whole number such as 2' })
          .int('vendor_sessions.max_per_identity must be a whole number such as 2')
          .min(1, 'vendor_sessions.max_per_identity must be at least 1 (the vendor allows one login at least)')
          .max(40, 'vendor_sessions.max_per_identity is at most 40 (limits.max_concurrency bounds a batch to 40 anyway)')
          .default(2),
        /** How long a task waits for a free slot before it fails with VendorSessionsBusyError (the ASL retries it). */
        wait_seconds: z
          .number()
          .int()
          .min(0)
          .max(
            MAX_SLOT_WAIT_SECONDS,
            `vendor_sessions.wait_seconds is at most ${MAX_SLOT_WAIT_SECONDS} (the browser functions' timeouts are sized for that wait)`,
          )
          .default(20),
        /** How long a slot stays taken without renewal (a holder that died frees it after this); renewed every third of it. */
        lease_seconds: z
          .number()
          .int()
          .min(5, 'vendor_sessions.lease_seconds is at least 5 (it is renewed every third of it)')
          .max(900)
          .default(60),
      })
      .strict()
      .default({ max_per_identity: 2, wait_seconds: 20, lease_seconds: 60 }),
  })
  .strict()
  .superRefine((config, ctx) => {
    const identities = new Map(config.identities.map((i) => [i.id, i]));
    config.tenants.forEach((tenant, index) => {
      const identity = identities.get(tenant.identity);
      if (!identity) {
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', index, 'identity'],
          message: `names identity "${tenant.identity}", which is not under identities`,
        });
      } else if (!identity.tenants.includes(tenant.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', index, 'identity'],
          message: `identity "${tenant.identity}" is not scoped for tenant "${tenant.id}"; add it to that identity's tenants`,
        });
      }
    });
    if (config.environment === 'aws' && !config.evidence.write_trace) {
      ctx.addIssue({
        code: 'custom',
        path: ['evidence', 'write_trace'],
        message: 'write_trace: false is for measuring a local stack only; on AWS every write keeps its trace as evidence',
      });
    }
    const signIn = config.approvals.sign_in;
    if (signIn?.issuer === 'embedded' && config.environment === 'aws') {
      ctx.addIssue({
        code: 'custom',
        path: ['approvals', 'sign_in', 'issuer'],
        message: 'the embedded provider is for the local stack only; on AWS set the Cognito user pool issuer URL',
      });
    }
    if (signIn && signIn.issuer !== 'embedded' && signIn.embedded_users.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['approvals', 'sign_in', 'embedded_users'],
        message: 'embedded_users are only for issuer: embedded; users of a real issuer live in that issuer',
      });
    }
    if (config.environment === 'aws' && config.requesters.attestation_secret?.source !== 'secrets_manager') {
      ctx.addIssue({
        code: 'custom',
        path: ['requesters', 'attestation_secret'],
        message: 'on AWS the requester attestation key is a Secrets Manager secret (the CDK app sets it)',
      });
    }
    if (config.environment === 'aws') {
      config.identities.forEach((identity, index) => {
        if (identity.credentials.source === 'inline') {
          ctx.addIssue({
            code: 'custom',
            path: ['identities', index, 'credentials', 'source'],
            message: 'inline credentials are for the local stack only; use secrets_manager on AWS',
          });
        }
      });
    }
  });
export type PaperclipConfig = z.infer<typeof PaperclipConfig>;

/**
 * The bucket of the batches' working files: `evidence.working_bucket`, else the evidence bucket's name
 * (cut to fit) with `-runs`. Apart from the evidence bucket, whose Object Lock would keep every item
 * list and result file for the whole retention period.
 */
export function workingBucketName(evidence: { bucket: string; working_bucket?: string | undefined }): string {
  return evidence.working_bucket ?? `${evidence.bucket.slice(0, 58)}-runs`;
}
