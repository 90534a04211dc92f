import { WriteTask } from '../../src/domain/task.js';
import { attestedTask } from '../../src/app/requester.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../backoffices/simulator/server.js';
import { SimulatorControl } from '../../backoffices/simulator/control-client.js';
import { SettloControl } from '../../backoffices/settlo/control-client.js';
import { startSettlo } from '../../backoffices/settlo/server.js';
import { startLedgerly } from '../../backoffices/ledgerly/server.js';
import { LedgerlyControl } from '../../backoffices/ledgerly/control-client.js';
import { startEmbeddedPaperclip, type EmbeddedOptions, type EmbeddedPaperclip } from '../../twin/runtime/embedded-paperclip.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../src/contracts/table-definitions.js';
import { useFixture } from './fixture.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

export const CONTROL_TOKEN = 'test-control-token';

/** A back office (the simulator, or Ledgerly) plus Paperclip on the embedded stack, as one test fixture. */
export interface Harness<Control = SimulatorControl> {
  sim: Pick<RunningSimulator, 'url' | 'close'>;
  control: Control;
  paperclip: EmbeddedPaperclip;
  dataDir: string;
  /** Starts a guarded-write execution for one task and waits for its output. */
  runTask(task: unknown, name?: string): Promise<{ status: string; output: Record<string, unknown> }>;
  /** Starts a guarded-write execution without waiting (e.g. one that will wait for an approval). */
  startTask(task: unknown, name?: string): Promise<string>;
  /** Waits for an execution to close and returns its output. */
  waitForExecution(executionArn: string): Promise<{ status: string; output: Record<string, unknown> }>;
  stop(): Promise<void>;
}

interface HarnessOptions {
  configPath?: string;
  handlerOverrides?: EmbeddedOptions['handlerOverrides'];
  /** Changes the deployed IAM before the stack enforces it (a test that removes one grant). */
  editIam?: EmbeddedOptions['editIam'];
  /** Claims, executions and tables in memory (S3 still in a temporary folder): for tests that run thousands of items. */
  inMemory?: boolean;
}

export async function startHarness(
  options: HarnessOptions & { asyncDelayMs?: number; layout?: SimulatorOptions['layout'] } = {},
): Promise<Harness> {
  const sim = await startSimulator({
    controlToken: CONTROL_TOKEN,
    asyncDelayMs: options.asyncDelayMs ?? 150,
    ...(options.layout ? { layout: options.layout } : {}),
  });
  return harnessAround(sim, new SimulatorControl(sim.url, CONTROL_TOKEN), options);
}

/** Ledgerly (docs/ledgerly.md) with Paperclip driving it through sitepacks/ledgerly.yaml. */
export async function startLedgerlyHarness(
  options: { configPath?: string; asyncDelayMs?: number } = {},
): Promise<Harness<LedgerlyControl>> {
  const ledgerly = await startLedgerly({ controlToken: CONTROL_TOKEN, asyncDelayMs: options.asyncDelayMs ?? 150 });
  return harnessAround(ledgerly, new LedgerlyControl(ledgerly.url, CONTROL_TOKEN), {
    configPath: options.configPath ?? 'config/ledgerly.local.yaml',
  });
}

/** Settlo (docs/settlo.md) with Paperclip driving it through sitepacks/settlo.yaml; the work area only in its frame (the portal's default). */
export async function startSettloHarness(
  options: { configPath?: string; undoWindowSeconds?: number } = {},
): Promise<Harness<SettloControl>> {
  const settlo = await startSettlo({
    controlToken: CONTROL_TOKEN,
    asyncDelayMs: 150,
    undoWindowSeconds: options.undoWindowSeconds ?? 2,
  });
  return harnessAround(settlo, new SettloControl(settlo.url, CONTROL_TOKEN), {
    configPath: options.configPath ?? 'config/settlo.local.yaml',
  });
}

async function harnessAround<Control>(sim: Harness['sim'], control: Control, options: HarnessOptions): Promise<Harness<Control>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paperclip-test-'));
  const paperclip = await startEmbeddedPaperclip({
    vendorBaseUrl: sim.url,
    ...(options.inMemory ? {} : { dataDir }),
    retryIntervalOverrideMs: 50,
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.handlerOverrides ? { handlerOverrides: options.handlerOverrides } : {}),
    ...(options.editIam ? { editIam: options.editIam } : {}),
  });
  let counter = 0;
  const startTask = async (task: unknown, name?: string): Promise<string> => {
    const executionName = name ?? `adhoc-${Date.now().toString(36)}-${counter++}`;
    const started = await paperclip.services.clients.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: paperclip.arns.guardedWrite,
        name: executionName,
        // The harness is an entry point, like the CLI: it attests the requester the test names (routing checks it).
        input: JSON.stringify({ task: await attested(paperclip.services, task, executionName) }),
      }),
    );
    return started.executionArn!;
  };
  const waitForExecution = async (executionArn: string): Promise<{ status: string; output: Record<string, unknown> }> => {
    for (;;) {
      const d = await paperclip.services.clients.sfn.send(new DescribeExecutionCommand({ executionArn }));
      if (d.status !== 'RUNNING')
        return { status: d.status ?? '', output: d.output ? JSON.parse(d.output) : { error: d.error, cause: d.cause } };
      await sleep(150);
    }
  };
  return {
    sim,
    control: releasingHoldsOnReset(control, paperclip),
    paperclip,
    dataDir,
    startTask,
    waitForExecution,
    async runTask(task, name) {
      return waitForExecution(await startTask(task, name));
    },
    async stop() {
      await paperclip.stop();
      await sim.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A vendor reset starts a new scenario on the same stack. The vendor forgets its bills; the claims table does not, so
 * a write the last scenario left open (in takeover, or waiting for an approval nobody gives) would still hold its
 * item and block the next scenario's write of the same bill (one open write per item, docs/guarded-write.md). The
 * reset releases those holds, as an operator resolving the old scenario would; everything else stays.
 */
function releasingHoldsOnReset<Control>(control: Control, paperclip: EmbeddedPaperclip): Control {
  const vendor = control as { reset?: (...args: never[]) => Promise<unknown> };
  const reset = vendor.reset?.bind(control);
  if (!reset) return control;
  vendor.reset = async (...args: never[]) => {
    const answer = await reset(...args);
    await paperclip.iam.asOperator(() => releaseItemHolds(paperclip));
    return answer;
  };
  return control;
}

async function releaseItemHolds(paperclip: EmbeddedPaperclip): Promise<void> {
  const db = paperclip.services.clients.db;
  const TableName = tableName(paperclip.services.config.prefix, 'claims');
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName,
        FilterExpression: '#kind = :kind AND attribute_exists(holder)',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: { ':kind': 'open-item' },
        ExclusiveStartKey,
      }),
    );
    for (const lock of page.Items ?? []) {
      await paperclip.services.claims.releaseItem(String(lock['tenant']), String(lock['billNo']), String(lock['holder']));
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

/** One harness for the whole test file: started before its first test, stopped after its last. */
export function useHarness(): Harness;
export function useHarness<Control>(start: () => Promise<Harness<Control>>): Harness<Control>;
export function useHarness(start: () => Promise<Harness<unknown>> = () => startHarness()): Harness<unknown> {
  return useFixture(start, { stop: (h) => h.stop() });
}

/** The raw task with the attestation of its requester for this execution; a task routing would refuse anyway is left as it is. */
async function attested(services: EmbeddedPaperclip['services'], task: unknown, executionName: string): Promise<unknown> {
  const parsed = WriteTask.safeParse(task);
  if (!parsed.success || parsed.data.attestation) return task;
  const { attestation } = await attestedTask(services, parsed.data, executionName);
  return { ...(task as object), attestation };
}
