import { randomBytes, randomUUID } from 'node:crypto';
import {
  executionArn as buildExecutionArn,
  nameProblem,
  requireExecutionArn,
  requireStateMachineArn,
  stateMachineArn as buildStateMachineArn,
  type ArnScope,
} from './arns.js';
import { prepareDefinition, type PreparedDefinition } from './definition.js';
import { sfnErrors, SfnServiceError } from './errors.js';
import { ExecutionRun, type ExecutionHost } from './execution.js';
import type { LocalHandlers } from './handlers.js';
import type { ExecutionRecord, ExecutionStatus, HistoryEvent, StateMachineRecord } from './records.js';
import { FileStore, MemoryStore, type SfnStore } from './store.js';
import { TaskTokens } from './task-tokens.js';
import type { LocalObjectStore } from './distributed-map.js';
import { MAX_PAYLOAD_BYTES } from './task-errors.js';
import { FaultPlan, type FaultOptions, type TaskFault } from './faults.js';

/** How executions run: the same options for the service, its HTTP endpoint (server.ts) and the local stack. */
export interface StepFunctionsRunOptions {
  /**
   * Replace every Retry interval with this many ms instead of its IntervalSeconds/BackoffRate (keeps tests fast);
   * unset keeps ASL timing.
   */
  retryIntervalOverrideMs?: number;
  /** Each function's timeout in seconds by function name (src/contracts/functions.ts); others run unbounded. */
  functionTimeoutsSeconds?: Readonly<Record<string, number>>;
  /**
   * Lambda service faults injected into Task states from the start (throttles, service errors, timeouts; see
   * faults.ts); setFaults changes them later.
   */
  faults?: TaskFault[];
  faultOptions?: FaultOptions;
}

export interface LocalStepFunctionsOptions extends StepFunctionsRunOptions {
  region: string;
  accountId: string;
  handlers: LocalHandlers;
  /** Folder for state machines and executions (JSON files); omitted means memory only. */
  dataDir?: string;
  /** The role recorded for state machines created without one. */
  defaultRoleArn?: string;
}

interface StateMachineEntry {
  record: StateMachineRecord;
  prepared: PreparedDefinition;
  executions: Map<string, ExecutionRecord>;
}

export const RUNNER_RESTARTED_ERROR = 'Local.RunnerRestarted';
const RUNNER_RESTARTED_CAUSE =
  'The local Step Functions runner stopped while this execution was running. ' +
  'Real Step Functions would have continued it; locally it cannot be resumed - start a new execution.';

/**
 * The Step Functions service behind the local endpoint: state machines,
 * executions and task tokens. Methods take and return the API's JSON shapes
 * (timestamps as Date), and throw SfnServiceError with Step Functions' codes.
 */
export class LocalStepFunctions {
  readonly scope: ArnScope;
  private readonly store: SfnStore;
  private readonly stateMachines = new Map<string, StateMachineEntry>();
  private readonly executions = new Map<string, ExecutionRecord>();
  private readonly runs = new Map<string, ExecutionRun>();
  private readonly waiters = new Map<string, Array<(record: ExecutionRecord) => void>>();
  private readonly tokens = new TaskTokens();
  private readonly faults = new FaultPlan();
  private readonly host: ExecutionHost;
  private readonly defaultRoleArn: string;
  /** Distributed Map processors by child state machine name (`<machine>/<label>`); not listed as state machines. */
  private readonly processors = new Map<string, StateMachineEntry>();
  private closing = false;

  constructor(options: LocalStepFunctionsOptions) {
    this.scope = { region: options.region, accountId: options.accountId };
    this.store = options.dataDir ? new FileStore(options.dataDir) : new MemoryStore();
    this.defaultRoleArn = options.defaultRoleArn ?? `arn:aws:iam::${options.accountId}:role/local-stepfunctions`;
    this.host = {
      scope: this.scope,
      handlers: options.handlers,
      functionTimeoutsSeconds: options.functionTimeoutsSeconds ?? {},
      tokens: this.tokens,
      faults: this.faults,
      taskTokenPlaceholder: `local-task-token-placeholder-${randomBytes(8).toString('hex')}`,
      ...(options.retryIntervalOverrideMs !== undefined ? { retryIntervalOverrideMs: options.retryIntervalOverrideMs } : {}),
      save: (record, when) => this.store.saveExecution(record, when),
      finished: (record) => this.notifyFinished(record),
      stopExecution: (arn, error, cause) => this.runs.get(arn)?.stop(error, cause),
      startExecution: (request) => {
        const started = this.start(request.stateMachineArn, request.name, request.input, request.parentExecutionArn);
        return { executionArn: started.executionArn, startDate: started.startDate };
      },
      waitForExecution: (arn) => this.waitForExecution(arn),
      startMapRunChild: (request) => this.startMapRunChild(request),
    };
    if (options.faults) this.faults.set(options.faults, options.faultOptions);
    this.load();
  }

  /**
   * Injects Lambda throttles, service errors and timeouts (or, on other Task
   * states, any error) into the states named; an empty list turns them off.
   * Invalid faults are refused with the field named. Applies to invocations
   * from now on, running executions included.
   */
  setFaults(faults: TaskFault[], options: FaultOptions = {}): void {
    this.faults.set(faults, options);
  }

  /** How many times each `<state> <error>` fault fired since the faults were last set. */
  faultsFired(): Record<string, number> {
    return this.faults.fired();
  }

  /** Reads persisted records; executions left RUNNING by a previous process become FAILED. */
  private load(): void {
    for (const record of this.store.loadStateMachines()) {
      this.stateMachines.set(record.stateMachineArn, {
        record,
        prepared: prepareDefinition(record.definition, { validate: false }),
        executions: new Map(),
      });
    }
    for (const record of this.store.loadExecutions()) {
      this.tokens.rememberClosed(record.taskTokens);
      if (record.status === 'RUNNING') {
        const now = Date.now();
        record.status = 'FAILED';
        record.stopDate = now;
        record.error = RUNNER_RESTARTED_ERROR;
        record.cause = RUNNER_RESTARTED_CAUSE;
        const id = record.history.length + 1;
        record.history.push({
          id,
          previousEventId: id - 1,
          timestamp: now,
          type: 'ExecutionFailed',
          executionFailedEventDetails: { error: record.error, cause: record.cause },
        });
        this.store.saveExecution(record, 'now');
      }
      this.executions.set(record.executionArn, record);
      this.stateMachines.get(record.stateMachineArn)?.executions.set(record.name, record);
    }
  }

  // --- state machines -------------------------------------------------------

  createStateMachine(input: { name: string; definition: string; roleArn: string; type?: string }) {
    if (input.type !== undefined && input.type !== 'STANDARD') {
      throw sfnErrors.validation('type', 'only STANDARD workflows run locally', input.type);
    }
    const problem = nameProblem('name', input.name);
    if (problem) throw problem;
    const prepared = prepareDefinition(input.definition);
    const arn = buildStateMachineArn(this.scope, input.name);
    const existing = this.stateMachines.get(arn);
    if (existing) {
      if (existing.record.definition === input.definition && existing.record.roleArn === input.roleArn) {
        return { stateMachineArn: arn, creationDate: new Date(existing.record.creationDate) };
      }
      throw sfnErrors.stateMachineAlreadyExists(arn);
    }
    const record: StateMachineRecord = {
      name: input.name,
      stateMachineArn: arn,
      definition: input.definition,
      roleArn: input.roleArn,
      type: 'STANDARD',
      creationDate: Date.now(),
    };
    this.stateMachines.set(arn, { record, prepared, executions: new Map() });
    this.store.saveStateMachine(record);
    return { stateMachineArn: arn, creationDate: new Date(record.creationDate) };
  }

  /** New executions use the new definition; running ones finish on the one they started with. */
  updateStateMachine(input: { stateMachineArn: string; definition?: string; roleArn?: string }) {
    const entry = this.stateMachine(input.stateMachineArn);
    if (input.definition !== undefined) {
      entry.prepared = prepareDefinition(input.definition);
      entry.record.definition = input.definition;
    }
    if (input.roleArn !== undefined) entry.record.roleArn = input.roleArn;
    this.store.saveStateMachine(entry.record);
    return { updateDate: new Date() };
  }

  /** Creates the state machine, or updates its definition if one with this name exists. */
  upsertStateMachine(name: string, definition: string, roleArn = this.defaultRoleArn): string {
    const arn = buildStateMachineArn(this.scope, name);
    if (this.stateMachines.has(arn)) {
      const current = this.stateMachines.get(arn)!.record;
      if (current.definition !== definition || current.roleArn !== roleArn) {
        this.updateStateMachine({ stateMachineArn: arn, definition, roleArn });
      }
      return arn;
    }
    return this.createStateMachine({ name, definition, roleArn }).stateMachineArn;
  }

  listStateMachines(input: { maxResults?: number; nextToken?: string }) {
    const all = [...this.stateMachines.values()]
      .map((e) => e.record)
      .sort((a, b) => a.creationDate - b.creationDate || a.name.localeCompare(b.name));
    const page = paginate(all, 'state-machines', input.maxResults, input.nextToken);
    return {
      stateMachines: page.items.map((r) => ({
        stateMachineArn: r.stateMachineArn,
        name: r.name,
        type: r.type,
        creationDate: new Date(r.creationDate),
      })),
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    };
  }

  describeStateMachine(input: { stateMachineArn: string }) {
    const r = this.stateMachine(input.stateMachineArn).record;
    return {
      stateMachineArn: r.stateMachineArn,
      name: r.name,
      status: 'ACTIVE',
      definition: r.definition,
      roleArn: r.roleArn,
      type: r.type,
      creationDate: new Date(r.creationDate),
      loggingConfiguration: { level: 'OFF', includeExecutionData: false },
    };
  }

  // --- executions -----------------------------------------------------------

  startExecution(input: { stateMachineArn: string; name?: string; input?: string }) {
    const record = this.start(input.stateMachineArn, input.name, input.input ?? '{}');
    return { executionArn: record.executionArn, startDate: new Date(record.startDate) };
  }

  /** Where a Distributed Map reads items and writes results: the local S3 (set once it is listening). */
  useObjectStore(objects: LocalObjectStore): void {
    this.host.objects = objects;
  }

  private startMapRunChild(request: {
    stateMachineName: string;
    processor: PreparedDefinition;
    name: string;
    input: string;
    parentExecutionArn: string;
  }): ExecutionRecord {
    let entry = this.processors.get(request.stateMachineName);
    if (!entry || entry.prepared !== request.processor) {
      const parent = this.executions.get(request.parentExecutionArn);
      entry = {
        record: {
          name: request.stateMachineName,
          stateMachineArn: buildStateMachineArn(this.scope, request.stateMachineName),
          definition: JSON.stringify(request.processor.runnable),
          roleArn: (parent && this.stateMachines.get(parent.stateMachineArn)?.record.roleArn) ?? this.defaultRoleArn,
          type: 'STANDARD',
          creationDate: Date.now(),
        },
        prepared: request.processor,
        executions: entry?.executions ?? new Map(),
      };
      this.processors.set(request.stateMachineName, entry);
    }
    return this.launch(entry, request.name, request.input, request.parentExecutionArn);
  }

  private start(stateMachineArn: string, name: string | undefined, input: string, parentExecutionArn?: string): ExecutionRecord {
    return this.launch(this.stateMachine(stateMachineArn), name, input, parentExecutionArn);
  }

  private launch(entry: StateMachineEntry, name: string | undefined, input: string, parentExecutionArn?: string): ExecutionRecord {
    if (this.closing) throw new SfnServiceError('ServiceUnavailable', 'the local Step Functions runner is shutting down', 503);
    const executionName = name ?? randomUUID();
    const problem = nameProblem('name', executionName);
    if (problem) throw problem;
    const normalizedInput = normalizeInput(input);
    const arn = buildExecutionArn(this.scope, entry.record.name, executionName);
    const existing = entry.executions.get(executionName);
    if (existing) {
      // Standard workflows: the same name and input while still running is the same request.
      if (existing.status === 'RUNNING' && normalizeInput(existing.input) === normalizedInput) return existing;
      throw sfnErrors.executionAlreadyExists(arn);
    }
    const record: ExecutionRecord = {
      executionArn: arn,
      stateMachineArn: entry.record.stateMachineArn,
      stateMachineName: entry.record.name,
      name: executionName,
      status: 'RUNNING',
      startDate: Date.now(),
      input,
      ...(parentExecutionArn ? { parentExecutionArn } : {}),
      taskTokens: [],
      history: [],
    };
    entry.executions.set(executionName, record);
    this.executions.set(arn, record);
    const run = new ExecutionRun(this.host, record, entry.record, entry.prepared);
    this.runs.set(arn, run);
    run.start();
    return record;
  }

  describeExecution(input: { executionArn: string }) {
    const r = this.execution(input.executionArn);
    return {
      ...executionListItem(r),
      input: r.input,
      inputDetails: { included: true },
      ...(r.output !== undefined ? { output: r.output, outputDetails: { included: true } } : {}),
      ...(r.error !== undefined ? { error: r.error } : {}),
      ...(r.cause !== undefined ? { cause: r.cause } : {}),
    };
  }

  listExecutions(input: { stateMachineArn: string; statusFilter?: ExecutionStatus; maxResults?: number; nextToken?: string }) {
    const entry = this.stateMachine(input.stateMachineArn);
    const matching = [...entry.executions.values()]
      .filter((r) => !input.statusFilter || r.status === input.statusFilter)
      .sort((a, b) => b.startDate - a.startDate || a.name.localeCompare(b.name));
    const page = paginate(
      matching,
      `executions:${entry.record.stateMachineArn}:${input.statusFilter ?? ''}`,
      input.maxResults,
      input.nextToken,
    );
    return {
      executions: page.items.map(executionListItem),
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    };
  }

  getExecutionHistory(input: {
    executionArn: string;
    maxResults?: number;
    reverseOrder?: boolean;
    includeExecutionData?: boolean;
    nextToken?: string;
  }) {
    const r = this.execution(input.executionArn);
    const ordered = input.reverseOrder ? [...r.history].reverse() : r.history;
    const page = paginate(ordered, `history:${r.executionArn}:${input.reverseOrder ? 'r' : 'f'}`, input.maxResults, input.nextToken);
    const withData = input.includeExecutionData ?? true;
    return {
      events: page.items.map((e) => toApiEvent(e, withData)),
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    };
  }

  stopExecution(input: { executionArn: string; error?: string; cause?: string }) {
    const r = this.execution(input.executionArn);
    if (r.status === 'RUNNING') this.runs.get(r.executionArn)?.stop(input.error, input.cause);
    return { stopDate: new Date(r.stopDate ?? Date.now()) };
  }

  // --- callbacks ------------------------------------------------------------

  sendTaskSuccess(input: { taskToken: string; output: string }) {
    try {
      JSON.parse(input.output);
    } catch (err) {
      throw sfnErrors.invalidOutput(`output is not valid JSON (${(err as Error).message})`);
    }
    if (Buffer.byteLength(input.output) > MAX_PAYLOAD_BYTES) {
      throw sfnErrors.validation('output', `Member must have length less than or equal to ${MAX_PAYLOAD_BYTES}`, '<large output>');
    }
    this.tokens.succeed(input.taskToken, input.output);
    return {};
  }

  sendTaskFailure(input: { taskToken: string; error?: string; cause?: string }) {
    this.tokens.fail(input.taskToken, input.error, input.cause);
    return {};
  }

  // --- in-process helpers ---------------------------------------------------

  /** The state machine whose execution waits on `token`, as IAM sees a task response; undefined for an unknown or closed token. */
  stateMachineOfTaskToken(token: string): string | undefined {
    const execution = this.tokens.executionOf(token);
    // arn:aws:states:<region>:<account>:execution:<state machine>:<name>
    const match = execution ? /^(arn:[^:]+:states:[^:]+:[^:]+):execution:(.+):[^:]+$/.exec(execution) : null;
    return match ? `${match[1]}:stateMachine:${match[2]}` : undefined;
  }

  /** Resolves when the execution has closed (any status). */
  waitForExecution(executionArn: string): Promise<ExecutionRecord> {
    const record = this.execution(executionArn);
    if (record.status !== 'RUNNING') return Promise.resolve(record);
    return new Promise((resolve) => {
      const list = this.waiters.get(executionArn) ?? [];
      list.push(resolve);
      this.waiters.set(executionArn, list);
    });
  }

  runningCount(): number {
    return this.runs.size;
  }

  /**
   * Stops running executions without recording an outcome (their files stay
   * RUNNING, so the next start marks them Local.RunnerRestarted) and writes
   * everything pending to disk.
   */
  async close(): Promise<void> {
    this.closing = true;
    const runs = [...this.runs.values()];
    for (const run of runs) run.detach();
    await Promise.all(runs.map((r) => r.done.catch(() => undefined)));
    this.store.flush();
  }

  private notifyFinished(record: ExecutionRecord): void {
    this.runs.delete(record.executionArn);
    const list = this.waiters.get(record.executionArn) ?? [];
    this.waiters.delete(record.executionArn);
    for (const resolve of list) resolve(record);
  }

  private stateMachine(arn: string): StateMachineEntry {
    requireStateMachineArn(arn);
    const entry = this.stateMachines.get(arn);
    if (!entry) throw sfnErrors.stateMachineDoesNotExist(arn);
    return entry;
  }

  private execution(arn: string): ExecutionRecord {
    requireExecutionArn(arn);
    const record = this.executions.get(arn);
    if (!record) throw sfnErrors.executionDoesNotExist(arn);
    return record;
  }
}

/** An execution as ListExecutions lists it; DescribeExecution answers the same fields and its data. */
function executionListItem({ executionArn, stateMachineArn, name, status, startDate, stopDate }: ExecutionRecord) {
  const stopped = stopDate !== undefined ? { stopDate: new Date(stopDate) } : {};
  return { executionArn, stateMachineArn, name, status, startDate: new Date(startDate), ...stopped };
}

function normalizeInput(input: string): string {
  if (Buffer.byteLength(input) > MAX_PAYLOAD_BYTES) {
    throw sfnErrors.invalidExecutionInput(`input is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  }
  try {
    return JSON.stringify(JSON.parse(input));
  } catch (err) {
    throw sfnErrors.invalidExecutionInput(`input is not valid JSON (${(err as Error).message})`);
  }
}

const DETAIL_DATA_FIELDS = ['input', 'output', 'parameters'];

function toApiEvent(event: HistoryEvent, includeData: boolean): Record<string, unknown> {
  const { timestamp, ...rest } = event;
  const api: Record<string, unknown> = { timestamp: new Date(timestamp), ...rest };
  if (!includeData) {
    for (const [key, value] of Object.entries(api)) {
      if (key.endsWith('EventDetails') && value && typeof value === 'object') {
        api[key] = Object.fromEntries(Object.entries(value).filter(([k]) => !DETAIL_DATA_FIELDS.includes(k)));
      }
    }
  }
  return api;
}

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** Opaque nextToken: the offset and the listing it belongs to. */
function paginate<T>(items: readonly T[], listing: string, maxResults?: number, nextToken?: string) {
  let offset = 0;
  if (nextToken) {
    try {
      const parsed = JSON.parse(Buffer.from(nextToken, 'base64url').toString('utf8')) as { o?: unknown; l?: unknown };
      if (parsed.l !== listing || typeof parsed.o !== 'number') throw new Error('foreign token');
      offset = parsed.o;
    } catch {
      throw sfnErrors.invalidToken('Invalid nextToken');
    }
  }
  const size = !maxResults ? DEFAULT_PAGE : Math.min(maxResults, MAX_PAGE);
  const slice = items.slice(offset, offset + size);
  const next =
    offset + size < items.length ? Buffer.from(JSON.stringify({ o: offset + size, l: listing })).toString('base64url') : undefined;
  return { items: slice, nextToken: next };
}
