import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  PutBucketVersioningCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { z } from 'zod';
import { digestKeyAlias, functionPhysicalName, functionTimeouts, type WorkflowFunctionName } from '../../src/contracts/functions.js';
import { awsClientConfig, LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalClientConfig } from './aws-config.js';
import { createTables, startLocalDynamoDb, type CreateTablesResult } from './dynamodb.js';
import { startLocalS3 } from './s3.js';
import type { DefaultRetention } from './s3-object-lock.js';
import { startLocalKms, type LocalKms } from './kms.js';
import { readSesInbox, startLocalSes, type StoredEmail } from './ses.js';
import type { LocalHandler, LocalHandlers } from './stepfunctions/handlers.js';
import { startLocalStepFunctions, type LocalStepFunctionsEndpoint } from './stepfunctions/server.js';
import type { LocalStepFunctions, StepFunctionsRunOptions } from './stepfunctions/service.js';

/**
 * The Step Functions run options (retry override, faults: stack.stepFunctions.setFaults changes them while running)
 * are the endpoint's.
 */
export interface LocalStackOptions extends StepFunctionsRunOptions {
  /**
   * Everything persists under this folder (dynamodb/, s3/, stepfunctions/);
   * a second stack on the same folder sees the same data. Omitted: DynamoDB
   * and Step Functions in memory, S3 in a temporary folder removed on stop.
   */
  dataDir?: string;
  /** Prefix of table, function and state machine names. Default `paperclip`. */
  prefix?: string;
  /** Evidence bucket created at start, with versioning and Object Lock. Default `<prefix>-evidence`. */
  bucket?: string;
  /**
   * The evidence bucket's default retention, as the deployment sets it (cdk/lib/evidence-bucket.ts).
   * Default COMPLIANCE for 365 days (the config's default `evidence.retention_days`).
   */
  evidenceRetention?: DefaultRetention;
  /**
   * The bucket of the batches' working files (item lists, map run results), created unversioned
   * and unlocked. Default: the evidence bucket's name (cut to fit) with `-runs`, as
   * workingBucketName() in src/config/schema.ts derives it.
   */
  workingBucket?: string;
  /** In-process Lambda handlers keyed by function name as it appears in the ASL ARNs (see localFunctionHandlers). */
  handlers: LocalHandlers;
  /** 0 or omitted: a free port each. */
  ports?: { dynamodb?: number; s3?: number; ses?: number; stepfunctions?: number; kms?: number };
  /** Signing keys the local KMS creates (once per data folder). Default: the digest key, `alias/<prefix>-digests`. */
  signingKeyAliases?: string[];
  /** Created, or updated when the definition changed since the data folder was written. */
  stateMachines?: Array<{ name: string; definition: string }>;
  region?: string;
  accountId?: string;
  /**
   * Function timeouts in seconds by function name. Default: the workflow functions'
   * deployed timeouts (src/contracts/functions.ts) under `prefix`.
   */
  functionTimeoutsSeconds?: Readonly<Record<string, number>>;
  /**
   * Emulators already running elsewhere (e.g. a process of their own, so their CPU is
   * not counted as this process's): the stack starts none of these, still creates its
   * tables and bucket on them, and leaves them running on stop. `sesInbox` defaults to
   * the `ses` endpoint (aws-ses-v2-local serves both).
   */
  external?: ExternalEndpoints;
}

const endpointUrl = (field: string) =>
  z
    .string()
    .regex(
      /^https?:\/\/[^/\s]+\/?$/,
      `external.${field} must be an http(s) origin such as http://127.0.0.1:4566 (the running emulator's endpoint)`,
    )
    .optional();

// The inbox URL as a local SES reports it: its origin, with the access token it was started with (twin/aws/ses.ts).
const inboxUrl = z
  .string()
  .regex(
    /^https?:\/\/[^/\s]+\/?(\?token=[A-Za-z0-9_-]+)?$/,
    "external.sesInbox must be the running inbox's URL such as http://127.0.0.1:4566/?token=… (as the emulator printed it)",
  )
  .optional();

const ExternalEndpointsSchema = z
  .object({ dynamodb: endpointUrl('dynamodb'), s3: endpointUrl('s3'), ses: endpointUrl('ses'), sesInbox: inboxUrl })
  .strict()
  .refine((e) => e.sesInbox === undefined || e.ses !== undefined, {
    message: 'external.sesInbox needs external.ses too: give both (the SES endpoint and its inbox), or neither to start SES here',
    path: ['sesInbox'],
  });
export type ExternalEndpoints = z.infer<typeof ExternalEndpointsSchema>;

function parseExternal(external: unknown): ExternalEndpoints {
  const parsed = ExternalEndpointsSchema.safeParse(external ?? {});
  if (!parsed.success) {
    throw new Error(`startLocalStack: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  return parsed.data;
}

interface Stoppable {
  stop(): Promise<void>;
}

export interface LocalStack {
  endpoints: { dynamodb: string; s3: string; ses: string; sesInbox: string; stepfunctions: string; kms: string };
  /**
   * The one credential the local KMS answers Sign for: give it only to the digest writer (the sealing code's
   * clients use the shared credential, which KMS refuses, as the sealing functions' roles are refused on AWS).
   */
  kmsSigner: LocalKms['signer'];
  region: string;
  accountId: string;
  prefix: string;
  bucket: string;
  workingBucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** State machine name -> ARN for `stateMachines`. */
  stateMachineArns: Record<string, string>;
  tables: CreateTablesResult;
  /** SDK client settings for one of the endpoints. */
  clientConfig(service: keyof LocalStack['endpoints']): LocalClientConfig;
  /** Mail accepted by local SES (the approval emails). */
  fetchEmails(since?: number): Promise<StoredEmail[]>;
  /** The in-process service behind the endpoint, e.g. to await an execution. */
  stepFunctions: LocalStepFunctions;
  /** Wall time from call to ready, for the start-up banner. */
  startupMs: number;
  /** Stops every server and closes every file; resolves when ports and the LevelDB lock are free. */
  stop(): Promise<void>;
}

/**
 * Starts local DynamoDB (+tables), S3 (+bucket), SES and Step Functions on 127.0.0.1;
 * for the services in `external`, uses those endpoints instead of starting its own.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const began = performance.now();
  const prefix = options.prefix ?? 'paperclip';
  const bucket = options.bucket ?? `${prefix}-evidence`;
  const workingBucket = options.workingBucket ?? `${bucket.slice(0, 58)}-runs`;
  const evidenceRetention = options.evidenceRetention ?? { mode: 'COMPLIANCE' as const, days: 365 };
  const region = options.region ?? LOCAL_REGION;
  const accountId = options.accountId ?? LOCAL_ACCOUNT_ID;
  const dir = options.dataDir;
  const ports = options.ports ?? {};
  const external = parseExternal(options.external);

  // Only what this call started: external emulators belong to whoever started them.
  const started: Stoppable[] = [];
  const track = <T extends Stoppable>(p: Promise<T>) =>
    p.then((s) => {
      started.push(s);
      return s;
    });
  const owned: { dynamodb?: Stoppable; s3?: Stoppable; ses?: Stoppable } = {};
  let dynamodb: { endpoint: string };
  let s3: { endpoint: string };
  let ses: { endpoint: string; inboxUrl: string; fetchEmails(since?: number): Promise<StoredEmail[]> };
  let sfn: LocalStepFunctionsEndpoint;
  let kms: LocalKms;
  try {
    [dynamodb, s3, ses, sfn, kms] = await Promise.all([
      external.dynamodb
        ? { endpoint: external.dynamodb }
        : track(startLocalDynamoDb({ port: ports.dynamodb ?? 0, ...(dir ? { path: join(dir, 'dynamodb') } : {}) })).then(
            (d) => (owned.dynamodb = d),
          ),
      external.s3
        ? { endpoint: external.s3 }
        : track(
            startLocalS3({
              port: ports.s3 ?? 0,
              buckets: [workingBucket],
              lockedBuckets: [{ name: bucket, defaultRetention: evidenceRetention }],
              ...(dir ? { directory: join(dir, 's3') } : {}),
            }),
          ).then((x) => (owned.s3 = x)),
      external.ses
        ? externalSes(external.ses, external.sesInbox)
        : track(startLocalSes({ port: ports.ses ?? 0 })).then((x) => (owned.ses = x)),
      track(
        startLocalStepFunctions({
          handlers: options.handlers,
          functionTimeoutsSeconds: options.functionTimeoutsSeconds ?? functionTimeouts(prefix),
          port: ports.stepfunctions ?? 0,
          region,
          accountId,
          ...(dir ? { dataDir: join(dir, 'stepfunctions') } : {}),
          ...(options.retryIntervalOverrideMs !== undefined ? { retryIntervalOverrideMs: options.retryIntervalOverrideMs } : {}),
          ...(options.faults ? { faults: options.faults } : {}),
          ...(options.faultOptions ? { faultOptions: options.faultOptions } : {}),
        }),
      ),
      track(
        startLocalKms({
          port: ports.kms ?? 0,
          aliases: options.signingKeyAliases ?? [digestKeyAlias(prefix)],
          region,
          accountId,
          ...(dir ? { directory: join(dir, 'kms') } : {}),
        }),
      ),
    ]);
  } catch (err) {
    await stopAll(started);
    throw err;
  }

  // Distributed Map states read their items from and write their results to the local S3.
  const objects = new S3Client(awsClientConfig(s3.endpoint, region));
  sfn.service.useObjectStore({
    async get(bucket, key) {
      const got = await objects.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return (await got.Body?.transformToString('utf8')) ?? '';
    },
    async put(bucket, key, body) {
      await objects.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }));
    },
  });

  let tables: CreateTablesResult;
  const stateMachineArns: Record<string, string> = {};
  try {
    // s3rver started here creates the bucket itself; one started elsewhere may not have it yet.
    if (external.s3) {
      await ensureBucket(objects, bucket, evidenceRetention);
      await ensureBucket(objects, workingBucket);
    }
    const client = new DynamoDBClient(awsClientConfig(dynamodb.endpoint, region));
    try {
      tables = await createTables(client, prefix);
    } finally {
      client.destroy();
    }
    for (const sm of options.stateMachines ?? []) {
      stateMachineArns[sm.name] = sfn.service.upsertStateMachine(sm.name, sm.definition);
    }
  } catch (err) {
    objects.destroy();
    await stopAll(started);
    throw err;
  }

  const endpoints = {
    dynamodb: dynamodb.endpoint,
    s3: s3.endpoint,
    ses: ses.endpoint,
    sesInbox: ses.inboxUrl,
    stepfunctions: sfn.endpoint,
    kms: kms.endpoint,
  };
  let stopping: Promise<void> | undefined;
  return {
    endpoints,
    region,
    accountId,
    prefix,
    bucket,
    workingBucket,
    credentials: { ...LOCAL_CREDENTIALS },
    kmsSigner: kms.signer,
    stateMachineArns,
    tables,
    clientConfig: (service) => awsClientConfig(endpoints[service], region),
    fetchEmails: (since) => ses.fetchEmails(since),
    stepFunctions: sfn.service,
    startupMs: Math.round(performance.now() - began),
    stop() {
      // Step Functions first, so no handler starts against a store that is closing.
      stopping ??= (async () => {
        await sfn.stop();
        await kms.stop();
        objects.destroy();
        await stopAll([owned.ses, owned.s3, owned.dynamodb].filter((x): x is Stoppable => x !== undefined));
      })();
      return stopping;
    },
  };
}

function externalSes(endpoint: string, inboxUrl = `${endpoint.replace(/\/$/, '')}/`) {
  return { endpoint, inboxUrl, fetchEmails: (since?: number) => readSesInbox(inboxUrl, since) };
}

/**
 * CreateBucket, where an existing bucket (this stack's, from an earlier start) is success; with a
 * retention, the bucket is created with Object Lock and gets it as its default retention.
 */
async function ensureBucket(client: S3Client, bucket: string, retention?: DefaultRetention): Promise<void> {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket, ...(retention ? { ObjectLockEnabledForBucket: true } : {}) }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyExists' && name !== 'BucketAlreadyOwnedByYou') throw error;
  }
  if (!retention) return;
  // A bucket that already existed without Object Lock gets it the way S3 allows: versioning first.
  await client.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  await client.send(
    new PutObjectLockConfigurationCommand({
      Bucket: bucket,
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: retention.mode, Days: retention.days } } },
    }),
  );
}

async function stopAll(services: Stoppable[]): Promise<void> {
  const results = await Promise.allSettled(services.map((s) => s.stop()));
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    throw new AggregateError(
      failures.map((f) => f.reason),
      'some local services failed to stop',
    );
  }
}

/**
 * Keys handlers by their local physical function name (`<prefix>-<name>`),
 * which is what the substituted ASL ARNs contain.
 */
export function localFunctionHandlers(prefix: string, byName: Partial<Record<WorkflowFunctionName, LocalHandler>>): LocalHandlers {
  const result: Record<string, LocalHandler> = {};
  for (const [name, handler] of Object.entries(byName) as Array<[WorkflowFunctionName, LocalHandler | undefined]>) {
    if (handler) result[functionPhysicalName(prefix, name)] = handler;
  }
  return result;
}

export { awsClientConfig };
