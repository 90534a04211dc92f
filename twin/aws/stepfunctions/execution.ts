import type { PreparedDefinition } from './definition.js';
import { HistoryRecorder, json, type LibraryEvent } from './history.js';
import { buildTaskHandlers, type IntegrationHost, type RunningExecution } from './integrations.js';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine, type RunOptions } from './library.js';
import type { ExecutionRecord, ExecutionStatus, StateMachineRecord } from './records.js';

export interface ExecutionHost extends IntegrationHost {
  /** Zero makes every Retry wait this many ms instead of IntervalSeconds/BackoffRate (tests only). */
  retryIntervalOverrideMs?: number;
  save(record: ExecutionRecord, when: 'now' | 'soon'): void;
  finished(record: ExecutionRecord): void;
  stopExecution(executionArn: string, error?: string, cause?: string): void;
}

interface Outcome {
  status: Exclude<ExecutionStatus, 'RUNNING'>;
  output?: string;
  error?: string;
  cause?: string;
}

/** The library's message when a Fail state has no Error/Cause of its own. */
const FAIL_STATE_DEFAULT_NAME = 'FailStateError';
const FAIL_STATE_DEFAULT_CAUSE = 'Execution failed because of a Fail state';

/** One execution in this process: runs the ASL, records history, writes the outcome. */
export class ExecutionRun implements RunningExecution {
  readonly history: HistoryRecorder;
  readonly syncChildren = new Set<string>();
  private readonly abandon = new AbortController();
  readonly abandoned = this.abandon.signal;
  private abortRunner?: () => void;
  private detached = false;
  private closed = false;
  done: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: ExecutionHost,
    readonly record: ExecutionRecord,
    private readonly stateMachine: StateMachineRecord,
    private readonly prepared: PreparedDefinition,
  ) {
    this.history = new HistoryRecorder(
      record,
      prepared.tasks,
      () => {
        if (!this.detached) host.save(record, 'soon');
      },
      // A limit Step Functions enforces (payload size, history length) fails the execution; no Catch applies.
      (breach) => queueMicrotask(() => this.close({ status: 'FAILED', ...breach })),
      new Set(prepared.distributedMaps.keys()),
    );
  }

  start(): void {
    const { record, stateMachine, prepared } = this;
    this.history.push(
      'ExecutionStarted',
      {
        executionStartedEventDetails: {
          input: record.input,
          inputDetails: { truncated: false },
          roleArn: stateMachine.roleArn,
        },
      },
      record.startDate,
    );
    this.host.save(record, 'now');

    const runner = new StateMachine(prepared.runnable, { validationOptions: { noValidate: true } });
    const options: RunOptions = {
      context: {
        Execution: {
          Id: record.executionArn,
          Name: record.name,
          RoleArn: stateMachine.roleArn,
          StartTime: new Date(record.startDate).toISOString(),
        },
        StateMachine: { Id: stateMachine.stateMachineArn, Name: stateMachine.name },
        Task: { Token: this.host.taskTokenPlaceholder },
      },
      overrides: {
        taskResourceLocalHandlers: buildTaskHandlers(this.host, this, prepared.tasks, prepared.distributedMaps) as NonNullable<
          RunOptions['overrides']
        >['taskResourceLocalHandlers'],
        ...(this.host.retryIntervalOverrideMs !== undefined
          ? {
              retryIntervalOverrides: Object.fromEntries(
                prepared.statesWithRetry.map((name) => [name, this.host.retryIntervalOverrideMs!]),
              ),
            }
          : {}),
      },
    };
    const execution = runner.run(JSON.parse(record.input), options);
    this.abortRunner = execution.abort;
    const translating = (async () => {
      for await (const event of execution.eventLogs) this.history.translate(event as unknown as LibraryEvent);
    })();
    this.done = (async () => {
      const outcome = await outcomeOf(execution.result);
      await translating.catch(() => undefined);
      this.close(outcome);
    })().catch((err: unknown) => {
      // Recording the outcome failed (e.g. the data folder is not writable): say so, keep serving.
      console.error(`local Step Functions: could not record the end of ${record.executionArn}:`, err);
    });
  }

  /** StopExecution: the execution is ABORTED at once; the runner is told to stop. */
  stop(error?: string, cause?: string): void {
    this.close({
      status: 'ABORTED',
      ...(error !== undefined ? { error } : {}),
      ...(cause !== undefined ? { cause } : {}),
    });
  }

  /**
   * The process is going away: stop running without recording an outcome, so
   * the persisted record stays RUNNING and the next start marks it
   * Local.RunnerRestarted.
   */
  detach(): void {
    this.detached = true;
    this.history.freeze();
    this.closed = true;
    this.host.tokens.retireExecution(this.record.executionArn);
    this.abandon.abort();
    this.abortRunner?.();
  }

  private close(outcome: Outcome): void {
    if (this.closed) return;
    this.closed = true;
    const { record, history } = this;
    const now = Date.now();
    record.status = outcome.status;
    record.stopDate = now;
    if (outcome.output !== undefined) record.output = outcome.output;
    if (outcome.error !== undefined) record.error = outcome.error;
    if (outcome.cause !== undefined) record.cause = outcome.cause;
    const errorDetails = {
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      ...(outcome.cause !== undefined ? { cause: outcome.cause } : {}),
    };
    switch (outcome.status) {
      case 'SUCCEEDED':
        history.push(
          'ExecutionSucceeded',
          {
            executionSucceededEventDetails: { output: outcome.output, outputDetails: { truncated: false } },
          },
          now,
        );
        break;
      case 'FAILED':
        history.push('ExecutionFailed', { executionFailedEventDetails: errorDetails }, now);
        break;
      case 'TIMED_OUT':
        history.push('ExecutionTimedOut', { executionTimedOutEventDetails: errorDetails }, now);
        break;
      case 'ABORTED':
        history.push('ExecutionAborted', { executionAbortedEventDetails: errorDetails }, now);
        break;
    }
    history.freeze();
    this.abortRunner?.();
    this.host.tokens.retireExecution(record.executionArn);
    this.host.faults.forget(record.executionArn);
    this.abandon.abort();
    // A .sync task's child is cancelled with its parent, as Step Functions does.
    for (const child of this.syncChildren) {
      this.host.stopExecution(child, 'States.Aborted', `parent execution ${record.executionArn} ended (${outcome.status})`);
    }
    this.host.save(record, 'now');
    this.host.finished(record);
  }
}

async function outcomeOf(result: Promise<unknown>): Promise<Outcome> {
  try {
    return { status: 'SUCCEEDED', output: json(await result) };
  } catch (err) {
    if (err instanceof ExecutionAbortedError) return { status: 'ABORTED' };
    if (err instanceof ExecutionTimeoutError) {
      return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'The execution ran longer than the state machine TimeoutSeconds' };
    }
    if (err instanceof ExecutionError) {
      const cause = err.cause as Error | undefined;
      const name = cause?.name;
      const message = cause?.message;
      return {
        status: 'FAILED',
        ...(name && name !== FAIL_STATE_DEFAULT_NAME ? { error: name } : {}),
        ...(message && message !== FAIL_STATE_DEFAULT_CAUSE ? { cause: message } : {}),
      };
    }
    return { status: 'FAILED', error: 'States.Runtime', cause: (err as Error)?.message ?? String(err) };
  }
}
