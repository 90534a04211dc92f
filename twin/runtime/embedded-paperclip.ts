import { setTimeout as sleep } from 'node:timers/promises';
import { resolve } from 'node:path';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStack, type ExternalEndpoints, type LocalStack } from '../aws/stack.js';
import { localSubstitutions, type FaultOptions, type TaskFault } from '../aws/stepfunctions/index.js';
import { STATE_MACHINES, stateMachinePhysicalName, type WorkflowFunctionName } from '../../src/contracts/functions.js';
import { loadStateMachineDefinition } from '../../src/contracts/asl.js';
import { applyPolicy } from '../../src/contracts/definition-policy.js';
import { loadRuntime } from '../../src/config/runtime.js';
import { workingBucketName } from '../../src/config/schema.js';
import { useServices, type Services } from '../../src/app/services.js';
import { createServices, type WiredServices } from '../../src/composition/services.js';
import { closeSharedBrowser } from '../../src/browser/chromium.js';
import { logger } from '../../src/observability/telemetry.js';
import type { BatchSummary } from '../../src/app/batch.js';
import { TERMINAL_STATUSES, type Claim } from '../../src/domain/claim.js';
import { workflowHandlers } from './handlers.js';
import { startApprovalServer, type ApprovalServer } from '../../src/approval-server/local-server.js';
import type { EmbeddedOidcProvider } from '../aws/oidc-provider.js';
import { attestedBatch } from '../../src/app/requester.js';
import { startScheduledBatch, type ScheduledStart } from '../../src/app/scheduled-batch.js';
import { scheduleRequester } from '../../src/contracts/schedule-requester.js';
import { CALLBACK_PATH } from '../../src/approval-server/sign-in.js';
import { LocalIam } from '../aws/iam/enforce.js';
import { iamCatalog, type IamCatalog } from '../aws/iam/policies.js';
import { TABLES, tableName } from '../../src/contracts/table-definitions.js';
import { writeDailyDigests, type DigestRun } from '../../src/app/digests.js';

/**
 * Paperclip on the embedded local stack: the same ASL and handlers as on AWS,
 * with DynamoDB, S3, SES and Step Functions emulated in this process (or, for
 * the services in `external`, emulators already running elsewhere).
 */
export interface EmbeddedOptions {
  configPath?: string;
  /** The vendor back office to drive (the simulator's URL locally). */
  vendorBaseUrl: string;
  /** Persist claims, evidence and executions here; omitted keeps them in memory. */
  dataDir?: string;
  /** Shorten Retry waits (tests). */
  retryIntervalOverrideMs?: number;
  /** Port of the approval pages; 0 or omitted picks a free one. Approval links follow the actual address. */
  approvalPort?: number;
  /** Replaces workflow steps by name (tests that are not about that step, e.g. a ReadList of 2,000 rows). */
  handlerOverrides?: Partial<Record<WorkflowFunctionName, (event: unknown) => Promise<unknown>>>;
  /**
   * DynamoDB, S3 and SES endpoints already running (the benchmark forks them so their CPU
   * is not counted as Paperclip's); Step Functions and the handlers stay in this process.
   * Omitted: every emulator starts here (see startLocalStack).
   */
  external?: ExternalEndpoints;
  /**
   * Changes the deployed IAM before it is enforced (tests: remove one grant and show the path that needs it fails).
   * Enforcement itself cannot be turned off: every workflow function and the approval endpoint run as their roles.
   */
  editIam?: (catalog: IamCatalog) => void;
  /**
   * Lambda throttles, service errors and timeouts injected into the workflows' Task states by
   * name (`*`: every Lambda task), as a real account produces them; `stack.stepFunctions.setFaults`
   * changes them while running. Omitted: none.
   */
  faults?: TaskFault[];
  faultOptions?: FaultOptions;
}

export interface EmbeddedPaperclip {
  stack: LocalStack;
  services: WiredServices;
  /** The deployed IAM, enforced on every call the workflow functions and the approval endpoint make. */
  iam: LocalIam;
  /** The approval pages (the links in the approval emails point here). */
  approvals: ApprovalServer;
  /** The OpenID provider approvers sign in with, when `approvals.sign_in.issuer` is `embedded`. */
  signInProvider?: EmbeddedOidcProvider;
  arns: { batch: string; guardedWrite: string };
  runBatch(request: { taskId: string; tenant: string; requestedBy?: string }, onProgress?: (p: BatchProgress) => void): Promise<BatchRun>;
  /**
   * Runs the digest function (there is no EventBridge locally): the signed digest of every finished day that has
   * none yet. The stack runs it at start and after each batch; `now` is for tests.
   */
  writeDigests(options?: { now?: number; tenants?: readonly string[] }): Promise<DigestRun>;
  /**
   * What a tenant's EventBridge schedule does on AWS (there is no Scheduler locally): invokes the schedules'
   * entry point, run as the start-scheduled-batch function's deployed role, which attests the schedule as the
   * requester and starts the batch. Returns the batch execution (not waited for).
   */
  startScheduledBatch(start: ScheduledStart): Promise<{ executionArn: string; taskId: string; requestedBy: string }>;
  stop(): Promise<void>;
}

export interface BatchProgress {
  /** The task's claims as read for this update (the tenant's): what `run --json-lines` prints items from. */
  claims?: readonly Claim[];
  claimed: number;
  byStatus: Record<string, number>;
  /** Where the batch execution is: reading the list, writing items, or summarising and sealing. */
  phase?: 'reading' | 'writing' | 'sealing';
  /** Items the batch will process (known once the list is read) and how many have finished. */
  total?: number;
  finished?: number;
}

/**
 * The batch's phase and item count, from its execution history. The items run
 * as a Distributed Map's child executions, whose events are not in this
 * history; how many have finished comes from their claims.
 */
async function batchStage(
  sfn: WiredServices['clients']['sfn'],
  executionArn: string,
): Promise<Pick<BatchProgress, 'phase' | 'total'> & { items?: string }> {
  let total: number | undefined;
  let items: string | undefined;
  let phase: BatchProgress['phase'] = 'reading';
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }));
    for (const event of page.events ?? []) {
      if (event.type === 'MapStateEntered') {
        phase = 'writing';
        try {
          const input = JSON.parse(event.stateEnteredEventDetails?.input ?? '{}') as {
            list?: { count?: number; items?: { bucket?: string; key?: string } };
          };
          total = input.list?.count;
          if (input.list?.items?.key) items = input.list.items.key;
        } catch {
          // no item count; the bar shows claims only
        }
      }
      if (event.type === 'MapStateExited' || (event.type === 'TaskStateEntered' && event.stateEnteredEventDetails?.name === 'ReadFailed'))
        phase = 'sealing';
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return { phase, ...(total !== undefined ? { total } : {}), ...(items ? { items } : {}) };
}

/**
 * The bar's item count: the map's items, plus the task's items an earlier run settled that the list no longer
 * showed (so not in the map), which the summary counts too; the progress line and the summary agree.
 */
async function itemsInAll(
  services: WiredServices,
  stage: { total?: number; items?: string },
  settledBefore: ReadonlySet<string>,
): Promise<number | undefined> {
  if (stage.total === undefined || !stage.items || settledBefore.size === 0) return stage.total;
  const body = await services.working.get(stage.items);
  const mapped = new Set(body ? (JSON.parse(body.toString('utf8')) as Array<{ key: string }>).map((i) => i.key) : []);
  return stage.total + [...settledBefore].filter((key) => !mapped.has(key)).length;
}

export interface BatchRun {
  executionArn: string;
  status: string;
  summary?: BatchSummary;
  error?: string;
}

export async function startEmbeddedPaperclip(options: EmbeddedOptions): Promise<EmbeddedPaperclip> {
  const configPath = resolve(options.configPath ?? 'config/paperclip.local.yaml');
  const { config } = loadRuntime(configPath, { vendorBaseUrl: options.vendorBaseUrl });
  const region = config.region;
  const accountId = '000000000000';
  const substitutions = localSubstitutions(config.prefix, region, accountId);
  const stateMachines = STATE_MACHINES.map((sm) => ({
    name: stateMachinePhysicalName(config.prefix, sm.name),
    definition: applyPolicy(loadStateMachineDefinition(resolve('statemachines', sm.file), substitutions), config.write_policy),
  }));
  // The IAM the CDK app deploys (twin/aws/iam/deployed-iam.json), with this stack's names filled in.
  const catalog = iamCatalog({
    prefix: config.prefix,
    bucket: config.evidence.bucket,
    sender: config.approvals.sender,
    region,
    account: accountId,
  });
  options.editIam?.(catalog);
  const tables = new Map(TABLES.map((t) => [tableName(config.prefix, t.id), t]));
  let stepFunctions: LocalStack['stepFunctions'] | undefined;
  const iam = new LocalIam(catalog, {
    partitionKeyOf: (table, index) => {
      const definition = tables.get(table);
      if (!index) return definition?.partitionKey.name;
      return definition?.indexes.find((i) => i.name === index)?.partitionKey.name;
    },
    stateMachineOfToken: (token) => stepFunctions?.stateMachineOfTaskToken(token),
  });
  const stack = await startLocalStack({
    dataDir: options.dataDir,
    prefix: config.prefix,
    bucket: config.evidence.bucket,
    workingBucket: workingBucketName(config.evidence),
    evidenceRetention: { mode: 'COMPLIANCE', days: config.evidence.retention_days },
    handlers: workflowHandlers(config.prefix, (fn, body) => iam.runAsFunction(fn, body), options.handlerOverrides),
    stateMachines,
    region,
    accountId,
    ...(options.retryIntervalOverrideMs !== undefined ? { retryIntervalOverrideMs: options.retryIntervalOverrideMs } : {}),
    ...(options.external ? { external: options.external } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.faultOptions ? { faultOptions: options.faultOptions } : {}),
  });
  stepFunctions = stack.stepFunctions;
  const arns = {
    batch: stack.stateMachineArns[stateMachinePhysicalName(config.prefix, 'batch')]!,
    guardedWrite: stack.stateMachineArns[stateMachinePhysicalName(config.prefix, 'guarded-write')]!,
  };
  // Started before the services so the links in approval emails can carry its actual address.
  let approvalServices: Services | undefined;
  const approvals = await startApprovalServer({
    port: options.approvalPort ?? 0,
    services: () => {
      if (!approvalServices) throw new Error('the approval server answered before Paperclip finished starting');
      return approvalServices;
    },
    invoke: (request) => iam.runAsFunction('approval-http', request),
  }).catch(async (error: unknown) => {
    await stack.stop();
    throw error;
  });
  const signIn = config.approvals.sign_in;
  const signInProvider =
    signIn?.issuer === 'embedded'
      ? // Loaded only when configured: the provider is a local stand-in for Cognito, not part of every start.
        await (await import('../aws/oidc-provider.js'))
          .startEmbeddedOidcProvider({
            clientId: signIn.client_id,
            redirectUris: [new URL(CALLBACK_PATH, approvals.url).href],
            users: signIn.embedded_users,
          })
          .catch(async (error: unknown) => {
            await approvals.stop();
            await stack.stop();
            throw error;
          })
      : undefined;
  const environment = {
    PAPERCLIP_CONFIG: configPath,
    PAPERCLIP_VENDOR_BASE_URL: options.vendorBaseUrl,
    PAPERCLIP_AWS_REGION: region,
    PAPERCLIP_DYNAMODB_ENDPOINT: stack.endpoints.dynamodb,
    PAPERCLIP_S3_ENDPOINT: stack.endpoints.s3,
    PAPERCLIP_SES_ENDPOINT: stack.endpoints.ses,
    PAPERCLIP_SFN_ENDPOINT: stack.endpoints.stepfunctions,
    PAPERCLIP_GUARDED_WRITE_ARN: arns.guardedWrite,
    PAPERCLIP_APPROVAL_BASE_URL: approvals.url,
    PAPERCLIP_KMS_ENDPOINT: stack.endpoints.kms,
    ...(signInProvider ? { PAPERCLIP_SIGN_IN_ISSUER: signInProvider.issuer } : {}),
  };
  const services = createServices(environment, { localIam: iam });
  // The digest function's own services: the only ones holding the local KMS's signer credential, as on AWS only
  // the digest function's role may sign (the workflow steps above sign nothing).
  const digestWriter = createServices(
    { ...environment, PAPERCLIP_KMS_SIGNER: `${stack.kmsSigner.accessKeyId}:${stack.kmsSigner.secretAccessKey}` },
    { localIam: iam },
  );
  // It runs as the digest function's deployed role, as the EventBridge rule invokes it on AWS.
  const writeDigests = (o: { now?: number; tenants?: readonly string[] } = {}) =>
    iam.runAsFunction('write-digests', () => writeDailyDigests(digestWriter, o));
  const digestQuietly = async () => {
    const run = await writeDigests().catch((error: unknown) => ({ failed: [{ tenant: '*', error: (error as Error).message }] }));
    for (const f of run.failed) process.stderr.write(`paperclip: daily digest of ${f.tenant} not written: ${f.error}\n`);
  };
  useServices(services);
  // The handlers' INFO line per step is for CloudWatch; locally the CLI tells the story, so only warnings and errors print.
  if (!process.env['POWERTOOLS_LOG_LEVEL']) logger.setLogLevel('WARN');
  approvalServices = services;

  async function runBatch(
    request: { taskId: string; tenant: string; requestedBy?: string },
    onProgress?: (p: BatchProgress) => void,
  ): Promise<BatchRun> {
    // What an earlier run of the task settled, for the bar's item count (itemsInAll).
    const settledBefore = onProgress
      ? new Set(
          (await services.claims.byTask(request.taskId, request.tenant))
            .filter((c) => TERMINAL_STATUSES.includes(c.status))
            .map((c) => c.key),
        )
      : new Set<string>();
    // A unique name per run: running the same task again must be possible (and finds every key already claimed).
    // Execution names may not hold colons; a scheduled id carries them in its time (the batch itself drops them too).
    const name = `${request.taskId.replace(/:/g, '')}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.slice(
      0,
      80,
    );
    const started = await services.clients.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: arns.batch,
        name,
        // This process is the entry point: it names the requester (the tenant's schedule unless told) and attests it.
        input: JSON.stringify(
          await attestedBatch(
            services,
            { ...request, requestedBy: request.requestedBy ?? scheduleRequester(config.prefix, request.tenant) },
            name,
          ),
        ),
      }),
    );
    const executionArn = started.executionArn!;
    let total: number | undefined;
    for (;;) {
      const described = await services.clients.sfn.send(new DescribeExecutionCommand({ executionArn }));
      if (described.status !== 'RUNNING') {
        // A batch is the local stack's clock tick: digest every day that ended since the last one.
        await digestQuietly();
        return {
          executionArn,
          status: described.status ?? 'UNKNOWN',
          summary: described.output ? (JSON.parse(described.output) as BatchSummary) : undefined,
          error: described.error ? `${described.error}: ${described.cause ?? ''}` : undefined,
        };
      }
      if (onProgress) {
        const claims = await services.claims.byTask(request.taskId, request.tenant);
        const byStatus: Record<string, number> = {};
        for (const c of claims) byStatus[c.status] = (byStatus[c.status] ?? 0) + 1;
        const finished = claims.filter((c) => TERMINAL_STATUSES.includes(c.status)).length;
        const { items, ...stage } = await batchStage(services.clients.sfn, executionArn).catch(() => ({}) as { items?: string });
        total ??= await itemsInAll(services, { ...stage, ...(items ? { items } : {}) }, settledBefore).catch(() => undefined);
        onProgress({ claims, claimed: claims.length, byStatus, finished, ...stage, ...(total !== undefined ? { total } : {}) });
      }
      await sleep(300);
    }
  }

  // No EventBridge locally: days that ended while the stack was stopped are digested when it starts.
  await digestQuietly();

  return {
    stack,
    services,
    iam,
    approvals,
    ...(signInProvider ? { signInProvider } : {}),
    arns,
    runBatch,
    writeDigests,
    startScheduledBatch: (start) => iam.runAsFunction('start-scheduled-batch', () => startScheduledBatch(services, start, arns.batch)),
    async stop() {
      digestWriter.close();
      await approvals.stop();
      await signInProvider?.stop();
      await stack.stop();
      useServices(undefined);
      await closeSharedBrowser();
    },
  };
}
