import { randomUUID } from 'node:crypto';
import type { DistributedMapInfo, PreparedDefinition, TaskInfo } from './definition.js';
import type { ExecutionRecord } from './records.js';
import { stateError } from './task-errors.js';

/** The S3 the runner reads items from and writes results to (s3rver locally). */
export interface LocalObjectStore {
  get(bucket: string, key: string): Promise<string>;
  put(bucket: string, key: string, body: string): Promise<void>;
}

/** What a Distributed Map needs from the service that runs it. */
export interface MapRunHost {
  scope: { region: string; accountId: string };
  objects?: LocalObjectStore;
  /** Starts one child execution of a map run's ItemProcessor (not a listed state machine). */
  startMapRunChild(request: {
    stateMachineName: string;
    processor: PreparedDefinition;
    name: string;
    input: string;
    parentExecutionArn: string;
  }): ExecutionRecord;
  waitForExecution(executionArn: string): Promise<ExecutionRecord>;
}

export interface MapRunParent {
  record: ExecutionRecord;
  history: { push(type: string, details?: Record<string, unknown>): void };
  syncChildren: Set<string>;
  abandoned: AbortSignal;
}

/** Locally "unlimited" concurrency (MaxConcurrency 0) still runs this many children at a time. */
const LOCAL_UNBOUNDED_CONCURRENCY = 1000;

interface MapRunParameters {
  reader?: { Bucket?: unknown; Key?: unknown };
  items?: unknown;
  maxConcurrency?: unknown;
  toleratedFailurePercentage?: unknown;
  toleratedFailureCount?: unknown;
  writer?: { Bucket?: unknown; Prefix?: unknown };
}

const runtimeError = (cause: string) => stateError('States.Runtime', cause, { catchable: false, retryable: false });

/**
 * Runs a Distributed Map the way Step Functions does: one Map Run, one child
 * execution per item (each with its own history, so the parent's stays
 * small), at most MaxConcurrency at a time, stopped once more children failed
 * than tolerated; results written to S3 as a manifest plus one file per status.
 */
export async function runDistributedMap(
  host: MapRunHost,
  parent: MapRunParent,
  task: TaskInfo,
  info: DistributedMapInfo,
  input: unknown,
): Promise<unknown> {
  const params = (input ?? {}) as MapRunParameters;
  const items = await readItems(host, params, task.stateName);
  const concurrency = nonNegative(params.maxConcurrency, 'MaxConcurrency', task.stateName) || LOCAL_UNBOUNDED_CONCURRENCY;
  const percentage = nonNegative(params.toleratedFailurePercentage, 'ToleratedFailurePercentage', task.stateName);
  if (percentage > 100) throw runtimeError(`state "${task.stateName}": ToleratedFailurePercentage must be 0-100, got ${percentage}`);
  const countGiven = params.toleratedFailureCount !== undefined;
  const tolerated = countGiven
    ? nonNegative(params.toleratedFailureCount, 'ToleratedFailureCount', task.stateName)
    : Math.floor((items.length * percentage) / 100);

  const { region, accountId } = host.scope;
  const mapRunId = randomUUID();
  const childMachine = `${parent.record.stateMachineName}/${info.label}`;
  const mapRunArn = `arn:aws:states:${region}:${accountId}:mapRun:${childMachine}:${mapRunId}`;
  parent.history.push('MapRunStarted', { mapRunStartedEventDetails: { mapRunArn } });

  const children: Array<ExecutionRecord | undefined> = new Array(items.length);
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < items.length && failed <= tolerated && !parent.abandoned.aborted) {
      const index = next++;
      const started = host.startMapRunChild({
        stateMachineName: childMachine,
        processor: info.processor,
        name: `${mapRunId.slice(0, 8)}-${index}`,
        input: JSON.stringify(items[index] ?? null),
        parentExecutionArn: parent.record.executionArn,
      });
      parent.syncChildren.add(started.executionArn);
      const child = await host.waitForExecution(started.executionArn);
      parent.syncChildren.delete(started.executionArn);
      children[index] = child;
      if (child.status !== 'SUCCEEDED') failed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (parent.abandoned.aborted) throw stateError('Local.TaskAbandoned', 'the execution closed while its map run was running');

  const done = children.filter((c): c is ExecutionRecord => c !== undefined);
  const written = info.writer ? await writeResults(host, params, info, task.stateName, mapRunArn, mapRunId, done) : undefined;
  if (failed > tolerated) {
    parent.history.push('MapRunFailed', { mapRunFailedEventDetails: { error: 'States.ExceedToleratedFailureThreshold' } });
    throw stateError(
      'States.ExceedToleratedFailureThreshold',
      `${failed} of ${items.length} child executions failed; the map run tolerates ${tolerated}` +
        (written ? ` (results: s3://${written.Bucket}/${written.Key})` : ''),
    );
  }
  parent.history.push('MapRunSucceeded');
  if (written) return { MapRunArn: mapRunArn, ResultWriterDetails: written };
  return done.map((c) => (c.output === undefined ? null : (JSON.parse(c.output) as unknown)));
}

async function readItems(host: MapRunHost, params: MapRunParameters, stateName: string): Promise<unknown[]> {
  if (!params.reader) {
    if (!Array.isArray(params.items)) throw runtimeError(`state "${stateName}": ItemsPath must select an array`);
    return params.items;
  }
  const { Bucket, Key } = params.reader;
  const fail = (why: string) => stateError('States.ItemReaderFailed', `state "${stateName}": ${why}`);
  if (typeof Bucket !== 'string' || typeof Key !== 'string') throw fail('ItemReader.Parameters must give Bucket and Key as strings');
  if (!host.objects) throw fail('the local runner has no S3 endpoint to read items from');
  let text: string;
  try {
    text = await host.objects.get(Bucket, Key);
  } catch (err) {
    throw fail(`could not read s3://${Bucket}/${Key}: ${(err as Error).message}`);
  }
  let items: unknown;
  try {
    items = JSON.parse(text);
  } catch (err) {
    throw fail(`s3://${Bucket}/${Key} is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(items)) throw fail(`s3://${Bucket}/${Key} must hold a JSON array of items`);
  return items;
}

function nonNegative(value: unknown, field: string, stateName: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw runtimeError(`state "${stateName}": ${field} must resolve to a number >= 0, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** One result line as Step Functions exports a child execution (Transformation NONE), or its output alone (COMPACT). */
function exportedResult(child: ExecutionRecord, transformation: 'NONE' | 'COMPACT'): unknown {
  if (transformation === 'COMPACT' && child.status === 'SUCCEEDED') return child.output === undefined ? null : JSON.parse(child.output);
  return {
    ExecutionArn: child.executionArn,
    Input: child.input,
    InputDetails: { Included: true },
    Name: child.name,
    ...(child.output !== undefined ? { Output: child.output, OutputDetails: { Included: true } } : {}),
    StartDate: new Date(child.startDate).toISOString(),
    StateMachineArn: child.stateMachineArn,
    Status: child.status,
    ...(child.stopDate !== undefined ? { StopDate: new Date(child.stopDate).toISOString() } : {}),
    ...(child.error !== undefined ? { Error: child.error } : {}),
    ...(child.cause !== undefined ? { Cause: child.cause } : {}),
  };
}

async function writeResults(
  host: MapRunHost,
  params: MapRunParameters,
  info: DistributedMapInfo,
  stateName: string,
  mapRunArn: string,
  mapRunId: string,
  children: readonly ExecutionRecord[],
): Promise<{ Bucket: string; Key: string }> {
  const writer = info.writer!;
  const { Bucket, Prefix } = params.writer ?? {};
  const fail = (why: string) => stateError('States.ResultWriterFailed', `state "${stateName}": ${why}`);
  if (typeof Bucket !== 'string') throw fail('ResultWriter.Parameters must give Bucket as a string');
  if (Prefix !== undefined && typeof Prefix !== 'string') throw fail('ResultWriter.Parameters.Prefix must be a string');
  if (!host.objects) throw fail('the local runner has no S3 endpoint to write results to');
  const folder = `${Prefix ? `${Prefix.replace(/\/+$/, '')}/` : ''}${mapRunId}`;
  const groups = { SUCCEEDED: [] as unknown[], FAILED: [] as unknown[], PENDING: [] as unknown[] };
  for (const child of children)
    (child.status === 'SUCCEEDED' ? groups.SUCCEEDED : groups.FAILED).push(exportedResult(child, writer.transformation));
  const files: Record<string, Array<{ Key: string; Size: number }>> = { FAILED: [], PENDING: [], SUCCEEDED: [] };
  try {
    for (const [status, results] of Object.entries(groups)) {
      if (results.length === 0) continue;
      const body = writer.outputType === 'JSONL' ? `${results.map((r) => JSON.stringify(r)).join('\n')}\n` : JSON.stringify(results);
      const key = `${folder}/${status}_0.json`;
      await host.objects.put(Bucket, key, body);
      files[status]!.push({ Key: key, Size: Buffer.byteLength(body) });
    }
    const manifestKey = `${folder}/manifest.json`;
    await host.objects.put(Bucket, manifestKey, JSON.stringify({ DestinationBucket: Bucket, MapRunArn: mapRunArn, ResultFiles: files }));
    return { Bucket, Key: manifestKey };
  } catch (err) {
    throw fail(`could not write results to s3://${Bucket}/${folder}/: ${(err as Error).message}`);
  }
}
