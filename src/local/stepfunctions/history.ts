import type { TaskInfo } from './definition.js';
import type { ExecutionRecord, HistoryEvent } from './records.js';

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
  private readonly failedContainers = new Set<string>();

  constructor(
    private readonly record: ExecutionRecord,
    private readonly tasks: ReadonlyMap<string, TaskInfo>,
    private readonly onChange: () => void,
  ) {}

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
        this.push(
          `${state.type}StateEntered`,
          {
            stateEnteredEventDetails: { name: state.name, input: json(state.input), inputDetails: NOT_TRUNCATED },
          },
          at,
        );
        if (state.type === 'Map') this.push('MapStateStarted', { mapStateStartedEventDetails: {} }, at);
        if (state.type === 'Parallel') this.push('ParallelStateStarted', undefined, at);
        return;
      }
      case 'StateExited': {
        if (!state) return;
        const key = `${state.name}#${event.index ?? ''}`;
        const failed = this.failedContainers.delete(key);
        if (!failed && state.type === 'Map') this.push('MapStateSucceeded', undefined, at);
        if (!failed && state.type === 'Parallel') this.push('ParallelStateSucceeded', undefined, at);
        this.push(
          `${state.type}StateExited`,
          {
            stateExitedEventDetails: { name: state.name, output: json(state.output), outputDetails: NOT_TRUNCATED },
          },
          at,
        );
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
