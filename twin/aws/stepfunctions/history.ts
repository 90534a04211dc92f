import type { TaskInfo } from './definition.js';
import type { ExecutionRecord, HistoryEvent } from './records.js';
import { MAX_HISTORY_EVENTS, MAX_PAYLOAD_BYTES } from './task-errors.js';

/** A Step Functions limit the execution ran into; the execution fails with it. */
export interface LimitBreach {
  error: string;
  cause: string;
}

/** The fields of the library's event log entries this module reads. */
export interface LibraryEvent {
  type: string;
  timestamp: number;
  state?: { name: string; type: string; input?: unknown; output?: unknown };
  parentState?: { name: string };
  index?: number;
  Error?: string;
  Cause?: unknown;
}

const NOT_TRUNCATED = { truncated: false };

/**
 * Builds an execution's history in Step Functions' event vocabulary:
 * `<Type>StateEntered/Exited`, `LambdaFunction*` for function-ARN tasks,
 * `Task*` for service integrations, `Map*`/`Parallel*`, and `Execution*`.
 * State events come from the runner's event log; task events are pushed by
 * the task integrations as they happen.
 */
export class HistoryRecorder {
  private frozen = false;
  private breached = false;
  private readonly failedContainers = new Set<string>();

  constructor(
    private readonly record: ExecutionRecord,
    private readonly tasks: ReadonlyMap<string, TaskInfo>,
    private readonly onChange: () => void,
    /** Called once, with the first limit the execution ran into (it then fails, as on AWS). */
    private readonly onLimit: (breach: LimitBreach) => void = () => undefined,
    /** States the runner executes as a Task that Step Functions records as a Map (Distributed Map). */
    private readonly mapStates: ReadonlySet<string> = new Set(),
  ) {}

  private breach(error: string, cause: string): void {
    if (this.breached) return;
    this.breached = true;
    this.onLimit({ error, cause });
  }

  /** State input and output are limited like task data: over 256 KiB, the execution fails. */
  private checkSize(what: string, stateName: string, text: string): void {
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_PAYLOAD_BYTES) {
      this.breach(
        'States.DataLimitExceeded',
        `the ${what} of state "${stateName}" is ${bytes} bytes, over the ${MAX_PAYLOAD_BYTES}-byte limit; store large data in S3 and pass its key`,
      );
    }
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  /** No events are recorded after the execution has closed. */
  freeze(): void {
    this.frozen = true;
  }

  push(type: string, details?: Record<string, unknown>, timestamp = Date.now()): void {
    if (this.frozen) return;
    const history = this.record.history;
    const closing = type.startsWith('Execution') && type !== 'ExecutionStarted';
    if (history.length >= MAX_HISTORY_EVENTS && !closing) {
      this.breach(
        'States.Runtime',
        `the execution history reached ${MAX_HISTORY_EVENTS} events, the Step Functions quota for a Standard execution`,
      );
      return;
    }
    const id = history.length + 1;
    const event: HistoryEvent = { id, previousEventId: id - 1, timestamp, type, ...(details ?? {}) };
    history.push(event);
    this.onChange();
  }

  /** Translates one runner event into zero or more history events. */
  translate(event: LibraryEvent): void {
    const state = event.state;
    const at = event.timestamp;
    switch (event.type) {
      case 'StateEntered': {
        if (!state) return;
        const type = this.mapStates.has(state.name) ? 'Map' : state.type;
        const input = json(state.input);
        this.checkSize('input', state.name, input);
        this.push(`${type}StateEntered`, { stateEnteredEventDetails: { name: state.name, input, inputDetails: NOT_TRUNCATED } }, at);
        if (type === 'Map') this.push('MapStateStarted', { mapStateStartedEventDetails: {} }, at);
        if (state.type === 'Parallel') this.push('ParallelStateStarted', undefined, at);
        return;
      }
      case 'StateExited': {
        if (!state) return;
        const type = this.mapStates.has(state.name) ? 'Map' : state.type;
        const key = `${state.name}#${event.index ?? ''}`;
        const failed = this.failedContainers.delete(key);
        if (!failed && type === 'Map') this.push('MapStateSucceeded', undefined, at);
        if (!failed && type === 'Parallel') this.push('ParallelStateSucceeded', undefined, at);
        const output = json(state.output);
        this.checkSize('output', state.name, output);
        this.push(`${type}StateExited`, { stateExitedEventDetails: { name: state.name, output, outputDetails: NOT_TRUNCATED } }, at);
        return;
      }
      case 'StateFailed': {
        if (!state) return;
        if (state.type === 'Map' || state.type === 'Parallel') {
          this.failedContainers.add(`${state.name}#${event.index ?? ''}`);
          this.push(`${state.type}StateFailed`, undefined, at);
          return;
        }
        const task = this.tasks.get(state.name);
        if (state.type === 'Task' && task && event.Error === 'States.Timeout') {
          const error = 'States.Timeout';
          if (task.integration.kind === 'lambda-function') {
            this.push('LambdaFunctionTimedOut', { lambdaFunctionTimedOutEventDetails: { error } }, at);
          } else {
            this.push('TaskTimedOut', { taskTimedOutEventDetails: { ...taskResource(task), error } }, at);
          }
        }
        return;
      }
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const key = `mapIteration${event.type.slice('MapIteration'.length)}EventDetails`;
        this.push(event.type, { [key]: { name: event.parentState?.name, index: event.index } }, at);
        return;
      }
      default:
        // Execution* events are written by the runner with the final outcome;
        // retries and catches have no history event of their own in Step Functions.
        return;
    }
  }
}

/** resourceType/resource as Step Functions splits an integration ARN (`lambda` / `invoke.waitForTaskToken`). */
export function taskResource(task: TaskInfo): { resourceType: string; resource: string } {
  const m = /^arn:aws[a-z-]*:states:::([^:]+):(.+)$/.exec(task.resource);
  return m ? { resourceType: m[1]!, resource: m[2]! } : { resourceType: 'lambda', resource: task.resource };
}

export function json(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}
