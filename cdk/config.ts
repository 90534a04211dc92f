import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Everything that differs between one Paperclip deployment and another. The
 * CDK app reads it from a JSON file (see cdk/deploy-config.sample.json) and
 * refuses to synthesize when a field is wrong, naming the field and the fix.
 */

/** Log retention values CloudWatch Logs accepts; anything else is rejected at deploy time. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const id = (what: string) =>
  z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, `${what} must be 1-40 characters of a-z, 0-9 and '-' (it becomes part of resource names)`);

/** EventBridge Scheduler accepts cron(), rate() and at() expressions. */
const scheduleExpression = z
  .string()
  .regex(
    /^(cron\([^()]+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\)|at\(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\))$/,
    "must be an EventBridge Scheduler expression such as 'cron(0 9 * * ? *)' or 'rate(1 hour)'",
  );

const timezone = z.string().refine(
  (tz) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  },
  { message: "must be an IANA time zone such as 'Asia/Shanghai'" },
);

const tenantSchema = z.object({
  /** Must name a tenant of the runtime config (its approvers, actions and identity live there). */
  id: id('tenant id'),
  schedule: z.object({
    expression: scheduleExpression,
    timezone,
    /** Paused schedules stay deployed but do not fire. */
    enabled: z.boolean().default(true),
  }),
});

export const deploymentConfigSchema = z
  .object({
    /** Prefix of every physical name (tables, functions, state machines, secrets). */
    prefix: z.string().regex(/^[a-z][a-z0-9-]{1,19}$/, "must start with a letter and be 2-20 characters of a-z, 0-9 and '-'"),
    /** Optional pinning of the target environment; otherwise the CLI's profile decides. */
    account: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "must be an AWS region such as 'ap-east-1'")
      .optional(),
    /**
     * The Paperclip config YAML (identities and their tenant scope, approvers,
     * actions, write policy, site pack), relative to the repository root. Its
     * deployment facts (prefix, bucket, sender, URLs, credentials) are replaced
     * by the values below when it is packaged into the functions.
     */
    runtimeConfig: z.string().min(1, "name the Paperclip config YAML, e.g. 'config/paperclip.aws.yaml'"),
    /**
     * Public base URL of the approval pages when the Function URL sits behind
     * your own domain; otherwise the Function URL itself is used.
     */
    approvalBaseUrl: z.url({ protocol: /^https$/, message: 'must be an https:// URL' }).optional(),
    /**
     * Concurrent executions reserved for (and capping) the public approval page function. The URL has no AWS
     * auth: the cap keeps a flood of requests from using up the account's concurrency the workflows need,
     * and bounds its cost. An approver's page answers in well under a second, so 5 serve hundreds of clicks
     * a minute. Reserving needs the account's unreserved concurrency to stay at or above its minimum
     * (docs/deploy.md, *Lambda concurrency*).
     */
    approvalReservedConcurrency: z
      .number()
      .int()
      .min(1, 'approvalReservedConcurrency must be at least 1 (0 would refuse every approval click)')
      .max(100)
      .default(5),
    /**
     * Prefix of the approvers' hosted sign-in domain (<prefix>.auth.<region>.amazoncognito.com), used when
     * the runtime config has approvals.sign_in. Default: <prefix>-approvers.
     */
    signInDomainPrefix: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, "must be a DNS label of a-z, 0-9 and '-', e.g. 'acme-paperclip-approvers'")
      .optional(),
    vendorBaseUrl: z.url({ protocol: /^https$/, message: 'must be the https:// base URL of the vendor back office' }),
    email: z.object(
      {
        /** From: address of approval and takeover mails. */
        senderAddress: z.email({ message: 'must be an email address SES may send from' }),
        /**
         * When set, SES verifies the whole domain (DKIM records to publish);
         * otherwise only senderAddress is verified (a click in a mail).
         */
        senderDomain: z
          .string()
          .regex(/^([a-z0-9-]+\.)+[a-z]{2,}$/, "must be a DNS domain such as 'ops.example.com'")
          .optional(),
        /** Receives alarm notifications (an SNS email subscription to confirm). */
        alarmAddress: z.email({ message: 'must be an email address for alarm notifications' }),
      },
      { error: 'required: an object with senderAddress and alarmAddress (see cdk/deploy-config.sample.json)' },
    ),
    evidence: z.object(
      {
        /** Globally unique; the handlers' config names it, so it is not left to CloudFormation. */
        bucketName: z
          .string()
          .regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, "must be an S3 bucket name (3-63 of a-z, 0-9, '-'), e.g. 'acme-paperclip-evidence'"),
        /**
         * The batches' working files (item lists, map run results): not evidence, so not locked. Default: the
         * evidence bucket's name (cut to fit) with `-runs` (workingBucketName in src/config/schema.ts).
         */
        workingBucketName: z
          .string()
          .regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, "must be an S3 bucket name (3-63 of a-z, 0-9, '-'), e.g. 'acme-paperclip-runs'")
          .optional(),
        /** Working files are deleted this many days after they were written. */
        workingFilesExpireDays: z.number().int().min(1).default(30),
        /** Object Lock default retention: evidence cannot be deleted or overwritten for this long. */
        retentionDays: z.number().int().min(1).max(36500),
        /**
         * COMPLIANCE: nobody, root included, can shorten retention or delete a locked version.
         * GOVERNANCE: principals with s3:BypassGovernanceRetention can (useful while trialling).
         */
        objectLockMode: z.enum(['COMPLIANCE', 'GOVERNANCE']).default('COMPLIANCE'),
        /** Move evidence to Glacier Instant Retrieval after this many days (still readable in ms). */
        glacierAfterDays: z.number().int().min(30).default(90),
        /** Server access logs are kept this long. */
        accessLogRetentionDays: z.number().int().min(1).default(365),
      },
      { error: 'required: an object with at least retentionDays (see cdk/deploy-config.sample.json)' },
    ),
    /** Scheduled batches, one entry per tenant that runs on a schedule. */
    tenants: z
      .array(tenantSchema, { error: 'required: a list of tenants, each { id, schedule: { expression, timezone } }' })
      .min(1, 'declare at least one tenant with a schedule'),
    /** No longer set here: each function's memory is derived from the benchmark (src/contracts/sizing.ts). */
    memory: z
      .unknown()
      .refine((value) => value === undefined, {
        error: 'memory sizes are derived from measurements in src/contracts/sizing.ts (docs/deploy.md, Sizing); remove "memory"',
      })
      .optional(),
    alarms: z
      .object({
        /** Alarm when HumanTakeover / ItemProcessed over an hour exceeds this fraction. */
        takeoverRateThreshold: z.number().gt(0).max(1).default(0.2),
      })
      .prefault({}),
    logRetentionDays: z
      .number()
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), {
        message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}`,
      })
      .default(90),
  })
  .superRefine((config, ctx) => {
    reportDuplicates(
      config.tenants.map((t) => t.id),
      ['tenants'],
      ctx,
    );
    if (config.email.senderDomain && !config.email.senderAddress.endsWith(`@${config.email.senderDomain}`)) {
      ctx.addIssue({
        code: 'custom',
        path: ['email', 'senderAddress'],
        message: `must be an address at senderDomain '${config.email.senderDomain}'`,
      });
    }
  });

function reportDuplicates(ids: string[], path: Array<string | number>, ctx: z.RefinementCtx): void {
  ids.forEach((value, index) => {
    if (ids.indexOf(value) !== index) {
      ctx.addIssue({ code: 'custom', path: [...path, index, 'id'], message: `duplicate id '${value}'` });
    }
  });
}

export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;
export type DeploymentConfigInput = z.input<typeof deploymentConfigSchema>;

export class DeploymentConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`deployment config ${source} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'DeploymentConfigError';
  }
}

/** `tenants[0].schedule.timezone` — the spelling a person would use to find the field. */
function fieldName(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((name, part) => {
    if (typeof part === 'number') return `${name}[${part}]`;
    return name ? `${name}.${String(part)}` : String(part);
  }, '');
}

export function parseDeploymentConfig(input: unknown, source = '(inline)'): DeploymentConfig {
  const result = deploymentConfigSchema.safeParse(input);
  if (result.success) return result.data;
  throw new DeploymentConfigError(
    source,
    result.error.issues.map((issue) => `field "${fieldName(issue.path) || '(root)'}": ${issue.message}`),
  );
}

export function loadDeploymentConfig(path: string): DeploymentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new DeploymentConfigError(path, [
      `cannot read the file (${(error as Error).message}); copy cdk/deploy-config.sample.json and point PAPERCLIP_DEPLOY_CONFIG at it`,
    ]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DeploymentConfigError(path, [`is not valid JSON: ${(error as Error).message}`]);
  }
  return parseDeploymentConfig(json, path);
}
