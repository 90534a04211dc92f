import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { functionPhysicalName, functionTimeouts, type WorkflowFunctionName } from '../workflow/functions.js';
import { awsClientConfig, LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalClientConfig } from './aws-config.js';
import { createTables, startLocalDynamoDb, type CreateTablesResult, type LocalDynamoDb } from './dynamodb.js';
import { startLocalS3, type LocalS3 } from './s3.js';
import { startLocalSes, type LocalSes, type StoredEmail } from './ses.js';
import type { LocalHandler, LocalHandlers } from './stepfunctions/handlers.js';
import { startLocalStepFunctions, type LocalStepFunctionsEndpoint } from './stepfunctions/server.js';
import type { LocalStepFunctions } from './stepfunctions/service.js';

export interface LocalStackOptions {
  /**
   * Everything persists under this folder (dynamodb/, s3/, stepfunctions/);
   * a second stack on the same folder sees the same data. Omitted: DynamoDB
   * and Step Functions in memory, S3 in a temporary folder removed on stop.
   */
  dataDir?: string;
  /** Prefix of table, function and state machine names. Default `paperclip`. */
  prefix?: string;
  /** Evidence bucket created at start. Default `<prefix>-evidence`. */
  bucket?: string;
  /** In-process Lambda handlers keyed by function name as it appears in the ASL ARNs (see localFunctionHandlers). */
  handlers: LocalHandlers;
  /** 0 or omitted: a free port each. */
  ports?: { dynamodb?: number; s3?: number; ses?: number; stepfunctions?: number };
  /** Created, or updated when the definition changed since the data folder was written. */
  stateMachines?: Array<{ name: string; definition: string }>;
  region?: string;
  accountId?: string;
  /** Every Retry waits this many ms instead of its IntervalSeconds/BackoffRate. Tests only. */
  retryIntervalOverrideMs?: number;
  /**
   * Function timeouts in seconds by function name. Default: the workflow functions'
   * deployed timeouts (src/workflow/functions.ts) under `prefix`.
   */
  functionTimeoutsSeconds?: Readonly<Record<string, number>>;
}

export interface LocalStack {
  endpoints: { dynamodb: string; s3: string; ses: string; sesInbox: string; stepfunctions: string };
  region: string;
  accountId: string;
  prefix: string;
  bucket: string;
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

/** Starts local DynamoDB (+tables), S3 (+bucket), SES and Step Functions on 127.0.0.1. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const began = performance.now();
  const prefix = options.prefix ?? 'paperclip';
  const bucket = options.bucket ?? `${prefix}-evidence`;
  const region = options.region ?? LOCAL_REGION;
  const accountId = options.accountId ?? LOCAL_ACCOUNT_ID;
  const dir = options.dataDir;
  const ports = options.ports ?? {};

  const started: Array<{ stop(): Promise<void> }> = [];
  const track = <T extends { stop(): Promise<void> }>(p: Promise<T>) =>
    p.then((s) => {
      started.push(s);
      return s;
    });
  let dynamodb: LocalDynamoDb, s3: LocalS3, ses: LocalSes, sfn: LocalStepFunctionsEndpoint;
  try {
    [dynamodb, s3, ses, sfn] = await Promise.all([
      track(startLocalDynamoDb({ port: ports.dynamodb ?? 0, ...(dir ? { path: join(dir, 'dynamodb') } : {}) })),
      track(startLocalS3({ port: ports.s3 ?? 0, buckets: [bucket], ...(dir ? { directory: join(dir, 's3') } : {}) })),
      track(startLocalSes({ port: ports.ses ?? 0 })),
      track(
        startLocalStepFunctions({
          handlers: options.handlers,
          functionTimeoutsSeconds: options.functionTimeoutsSeconds ?? functionTimeouts(prefix),
          port: ports.stepfunctions ?? 0,
          region,
          accountId,
          ...(dir ? { dataDir: join(dir, 'stepfunctions') } : {}),
          ...(options.retryIntervalOverrideMs !== undefined ? { retryIntervalOverrideMs: options.retryIntervalOverrideMs } : {}),
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
    await stopAll(started);
    throw err;
  }

  const endpoints = {
    dynamodb: dynamodb.endpoint,
    s3: s3.endpoint,
    ses: ses.endpoint,
    sesInbox: ses.inboxUrl,
    stepfunctions: sfn.endpoint,
  };
  let stopping: Promise<void> | undefined;
  return {
    endpoints,
    region,
    accountId,
    prefix,
    bucket,
    credentials: { ...LOCAL_CREDENTIALS },
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
        objects.destroy();
        await stopAll([ses, s3, dynamodb]);
      })();
      return stopping;
    },
  };
}

async function stopAll(services: Array<{ stop(): Promise<void> }>): Promise<void> {
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
