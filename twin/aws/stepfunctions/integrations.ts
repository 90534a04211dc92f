import { lambdaFunctionArn, type ArnScope } from './arns.js';
import { deadline } from '../../../src/lib/deadline.js';
import { MAX_LOCAL_TASK_TIMEOUT_SECONDS, type DistributedMapInfo, type TaskInfo } from './definition.js';
import { SfnServiceError } from './errors.js';
import { json, taskResource, type HistoryRecorder } from './history.js';
import type { LocalHandlers, LocalInvocationContext } from './handlers.js';
import type { ExecutionRecord } from './records.js';
import { runDistributedMap, type MapRunHost } from './distributed-map.js';
import type { TaskTokens } from './task-tokens.js';
import type { FaultPlan } from './faults.js';
import { dataLimitExceeded, lambdaFunctionError, lambdaTimedOut, MAX_PAYLOAD_BYTES, payloadBytes, stateError } from './task-errors.js';

/** What the task integrations need from the service that runs them. */
export interface IntegrationHost extends MapRunHost {
  scope: ArnScope;
  handlers: LocalHandlers;
  tokens: TaskTokens;
  /** Service faults to inject into Task states (Lambda throttles, service errors, timeouts); none unless set. */
  faults: FaultPlan;
  /** Each function's configured timeout by function name; a function without one runs unbounded. */
  functionTimeoutsSeconds: Readonly<Record<string, number>>;
  /** The value `$$.Task.Token` resolves to; replaced by a fresh token per callback task invocation. */
  taskTokenPlaceholder: string;
  startExecution(request: { stateMachineArn: string; name?: string; input: string; parentExecutionArn: string }): {
    executionArn: string;
    startDate: number;
  };
  waitForExecution(executionArn: string): Promise<ExecutionRecord>;
}

export interface RunningExecution {
  record: ExecutionRecord;
  history: HistoryRecorder;
  /** Child executions a `.sync` task is waiting for; stopped if this execution ends first. */
  syncChildren: Set<string>;
  /** Aborted when the execution closes: pending tasks give up so the runner's timers end. */
  abandoned: AbortSignal;
}

/**
 * Settles like `promise`, or rejects once the execution has closed. The work
 * itself (a handler still running) is not cancelled - as with a Lambda whose
 * state machine was stopped - but nothing waits for it any more.
 */
function unlessAbandoned<T>(run: RunningExecution, promise: Promise<T>): Promise<T> {
  const abandoned = () => stateError('Local.TaskAbandoned', 'the execution closed while this task was running');
  if (run.abandoned.aborted) return Promise.reject(abandoned());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abandoned());
    run.abandoned.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        run.abandoned.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        run.abandoned.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

type TaskHandler = (input: unknown) => Promise<unknown>;

const NOT_TRUNCATED = { truncated: false };

/** Lets the runner's event log drain first, so task events follow their StateEntered event. */
const afterQueuedEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One override per Task state name (the runner keys overrides by state name,
 * nested Map/Parallel states included), dispatching on the state's resource.
 */
export function buildTaskHandlers(
  host: IntegrationHost,
  run: RunningExecution,
  tasks: ReadonlyMap<string, TaskInfo>,
  distributedMaps: ReadonlyMap<string, DistributedMapInfo>,
): Record<string, TaskHandler> {
  const handlers: Record<string, TaskHandler> = {};
  for (const task of tasks.values()) {
    const integration = task.integration;
    switch (integration.kind) {
      case 'lambda-function':
        handlers[task.stateName] = (input) => runLambdaFunction(host, run, task, integration.functionName, input);
        break;
      case 'lambda-invoke':
        handlers[task.stateName] = integration.waitForTaskToken
          ? (input) => runLambdaCallback(host, run, task, input)
          : (input) => runLambdaInvoke(host, run, task, input);
        break;
      case 'start-execution':
        handlers[task.stateName] = (input) => runStartExecution(host, run, task, integration.pattern, input);
        break;
      case 'distributed-map': {
        const info = distributedMaps.get(task.stateName);
        if (!info) continue;
        handlers[task.stateName] = (input) => runDistributedMap(host, run, task, info, input);
        break;
      }
    }
    const dispatch = handlers[task.stateName]!;
    const invokesLambda = integration.kind === 'lambda-function' || integration.kind === 'lambda-invoke';
    handlers[task.stateName] = (input) => {
      // Task parameters over the limit fail before anything is scheduled, and no Catch sees it.
      const bytes = payloadBytes(input);
      if (bytes > MAX_PAYLOAD_BYTES) return Promise.reject(dataLimitExceeded(`the parameters of state "${task.stateName}"`, bytes));
      // A Lambda task draws its fault where the function is invoked; any other task fails before it starts.
      const fault = invokesLambda ? undefined : host.faults.draw(run.record.executionArn, task.stateName, undefined);
      if (fault) return Promise.reject(fault.error);
      return dispatch(input);
    };
  }
  return handlers;
}

async function runLambdaFunction(
  host: IntegrationHost,
  run: RunningExecution,
  task: TaskInfo,
  functionName: string,
  input: unknown,
): Promise<unknown> {
  // Past the task's timeout the runner has already recorded States.Timeout; a late answer adds nothing to the history.
  const limit = deadline(timeoutMs(task, input));
  await afterQueuedEvents();
  const record = (type: string, details?: Record<string, unknown>) => {
    if (!limit.expired) run.history.push(type, details);
  };
  record('LambdaFunctionScheduled', {
    lambdaFunctionScheduledEventDetails: {
      resource: task.resource,
      input: json(input),
      inputDetails: NOT_TRUNCATED,
      ...(task.timeoutSeconds !== undefined ? { timeoutInSeconds: task.timeoutSeconds } : {}),
    },
  });
  record('LambdaFunctionStarted');
  try {
    const output = await invokeHandler(host, run, task.stateName, functionName, input);
    await afterQueuedEvents();
    record('LambdaFunctionSucceeded', { lambdaFunctionSucceededEventDetails: { output: json(output), outputDetails: NOT_TRUNCATED } });
    return output;
  } catch (err) {
    const e = err as Error;
    await afterQueuedEvents();
    record('LambdaFunctionFailed', { lambdaFunctionFailedEventDetails: { error: e.name, cause: e.message } });
    throw err;
  }
}

async function runLambdaInvoke(host: IntegrationHost, run: RunningExecution, task: TaskInfo, input: unknown): Promise<unknown> {
  const limit = deadline(timeoutMs(task, input));
  const events = taskEvents(host, run, task, () => !limit.expired);
  await afterQueuedEvents();
  events.scheduled(input);
  events.started();
  try {
    const params = lambdaInvokeParameters(input, task.stateName);
    const payload = await invokeHandler(host, run, task.stateName, params.functionName, params.payload);
    const output = { ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200 };
    await afterQueuedEvents();
    events.succeeded(output);
    return output;
  } catch (err) {
    await afterQueuedEvents();
    events.failed(err as Error);
    throw err;
  }
}

/**
 * `lambda:invoke.waitForTaskToken`: invoke the function with a fresh token in
 * its payload, then wait for SendTaskSuccess/SendTaskFailure on that token.
 * The timeout itself is raised by the runner (States.Timeout); the token is
 * retired at the same deadline so late answers get TaskTimedOut.
 */
function runLambdaCallback(host: IntegrationHost, run: RunningExecution, task: TaskInfo, input: unknown): Promise<unknown> {
  // Minted before the first await: the retiring timer must be armed before the runner's timeout timer.
  const { token, outcome } = host.tokens.mint(run.record.executionArn, task.stateName, timeoutMs(task, input));
  run.record.taskTokens.push(token);
  const parameters = replaceTokenPlaceholder(input, host.taskTokenPlaceholder, token);
  const events = taskEvents(host, run, task, () => true);
  return (async () => {
    await afterQueuedEvents();
    // The history is readable by anyone allowed GetExecutionHistory: it records that a token was
    // passed, not the token (AWS records it; there only states:SendTask* on the state machine protects it).
    events.scheduled(replaceTokenPlaceholder(input, host.taskTokenPlaceholder, TOKEN_WITHHELD));
    events.started();
    try {
      const params = lambdaInvokeParameters(parameters, task.stateName);
      const payload = await invokeHandler(host, run, task.stateName, params.functionName, params.payload);
      events.submitted({ ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200 });
    } catch (err) {
      host.tokens.retire(token);
      await afterQueuedEvents();
      events.failed(err as Error);
      throw err;
    }
    const result = await outcome;
    await afterQueuedEvents();
    if (result.ok) {
      const output = JSON.parse(result.output) as unknown;
      events.succeeded(output);
      return output;
    }
    if ('abandoned' in result) {
      throw stateError('Local.TaskAbandoned', 'the execution closed while this task waited for its token');
    }
    const err = stateError(result.error ?? 'States.TaskFailed', result.cause ?? '');
    events.failed(err, result.error, result.cause);
    throw err;
  })();
}

async function runStartExecution(
  host: IntegrationHost,
  run: RunningExecution,
  task: TaskInfo,
  pattern: 'fire-and-forget' | 'sync' | 'sync:2',
  input: unknown,
): Promise<unknown> {
  const events = taskEvents(host, run, task, () => true);
  await afterQueuedEvents();
  events.scheduled(input);
  const params = startExecutionParameters(input, task.stateName);
  let started: { executionArn: string; startDate: number };
  try {
    started = host.startExecution({ ...params, parentExecutionArn: run.record.executionArn });
  } catch (err) {
    const e =
      err instanceof SfnServiceError
        ? stateError(
            `StepFunctions.${err.type.endsWith('Exception') ? err.type : `${err.type}Exception`}`,
            `${err.message} (Service: AWSStepFunctions; Status Code: ${err.httpStatus}; Error Code: ${err.type})`,
          )
        : (err as Error);
    events.failed(e);
    throw e;
  }
  events.started();
  const submitted = { ExecutionArn: started.executionArn, StartDate: started.startDate };
  if (pattern === 'fire-and-forget') {
    events.succeeded(submitted);
    return submitted;
  }
  events.submitted(submitted);
  run.syncChildren.add(started.executionArn);
  const child = await unlessAbandoned(run, host.waitForExecution(started.executionArn));
  run.syncChildren.delete(started.executionArn);
  await afterQueuedEvents();
  const described = describeForSync(child, pattern);
  if (child.status === 'SUCCEEDED') {
    events.succeeded(described);
    return described;
  }
  const err = stateError('States.TaskFailed', JSON.stringify(described));
  events.failed(err);
  throw err;
}

/** What `.sync` (strings) and `.sync:2` (parsed JSON) return, as DescribeExecution with capitalised keys. */
function describeForSync(child: ExecutionRecord, pattern: 'sync' | 'sync:2'): Record<string, unknown> {
  const parse = (text: string | undefined) => (text === undefined ? null : (JSON.parse(text) as unknown));
  return {
    ExecutionArn: child.executionArn,
    StateMachineArn: child.stateMachineArn,
    Name: child.name,
    Status: child.status,
    StartDate: child.startDate,
    ...(child.stopDate !== undefined ? { StopDate: child.stopDate } : {}),
    Input: pattern === 'sync:2' ? parse(child.input) : child.input,
    InputDetails: { Included: true },
    ...(child.output !== undefined
      ? { Output: pattern === 'sync:2' ? parse(child.output) : child.output, OutputDetails: { Included: true } }
      : {}),
    ...(child.error !== undefined ? { Error: child.error } : {}),
    ...(child.cause !== undefined ? { Cause: child.cause } : {}),
  };
}

function taskEvents(host: IntegrationHost, run: RunningExecution, task: TaskInfo, live: () => boolean) {
  const resource = taskResource(task);
  const push = (type: string, details: Record<string, unknown>) => {
    if (live()) run.history.push(type, details);
  };
  return {
    scheduled(parameters: unknown) {
      push('TaskScheduled', {
        taskScheduledEventDetails: {
          ...resource,
          region: host.scope.region,
          parameters: json(parameters),
          ...(task.timeoutSeconds !== undefined ? { timeoutInSeconds: task.timeoutSeconds } : {}),
        },
      });
    },
    started() {
      push('TaskStarted', { taskStartedEventDetails: resource });
    },
    submitted(output: unknown) {
      push('TaskSubmitted', { taskSubmittedEventDetails: { ...resource, output: json(output), outputDetails: NOT_TRUNCATED } });
    },
    succeeded(output: unknown) {
      push('TaskSucceeded', { taskSucceededEventDetails: { ...resource, output: json(output), outputDetails: NOT_TRUNCATED } });
    },
    failed(err: Error, error = err.name, cause = err.message) {
      push('TaskFailed', {
        taskFailedEventDetails: { ...resource, ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) },
      });
    },
  };
}

async function invokeHandler(
  host: IntegrationHost,
  run: RunningExecution,
  stateName: string,
  functionName: string,
  payload: unknown,
): Promise<unknown> {
  const handler = host.handlers[functionName];
  if (!handler) {
    const known = Object.keys(host.handlers).sort().join(', ') || 'none';
    throw stateError(
      'Lambda.ResourceNotFoundException',
      `Function not found: ${lambdaFunctionArn(host.scope, functionName)} (local handlers: ${known})`,
    );
  }
  const context: LocalInvocationContext = {
    executionArn: run.record.executionArn,
    executionName: run.record.name,
    stateMachineName: run.record.stateMachineName,
    stateName,
    functionName,
  };
  const fault = host.faults.draw(run.record.executionArn, stateName, functionName);
  // Throttled or refused by Lambda: the function never runs.
  if (fault?.timing === 'before') throw fault.error;
  const timeoutSeconds = host.functionTimeoutsSeconds[functionName];
  let result: unknown;
  try {
    // A deployed function gets its own deserialised copy of the event.
    const invocation = Promise.resolve().then(() => handler(structuredClone(payload), context));
    result = await unlessAbandoned(
      run,
      timeoutSeconds === undefined ? invocation : withinTimeout(invocation, functionName, timeoutSeconds),
    );
  } catch (err) {
    if (fault) throw fault.error;
    if (run.abandoned.aborted || isTimedOut(err)) throw err;
    throw lambdaFunctionError(err);
  }
  // The function ran to its end (whatever it changed stays changed), but the task fails as timed out.
  if (fault) throw fault.error;
  const text = JSON.stringify(result ?? null) ?? 'null';
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PAYLOAD_BYTES) throw dataLimitExceeded(`the result of ${functionName}`, bytes);
  return JSON.parse(text) as unknown;
}

const TIMED_OUT = Symbol('timed out');
const isTimedOut = (err: unknown) => err instanceof Error && (err as { [TIMED_OUT]?: boolean })[TIMED_OUT] === true;

/**
 * Lambda ends an invocation at the function's timeout. The handler here cannot
 * be stopped mid-flight (it shares this process), but nothing waits for it:
 * the task fails with the timeout as it would on AWS.
 */
function withinTimeout<T>(invocation: Promise<T>, functionName: string, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = lambdaTimedOut(functionName, seconds);
      Object.defineProperty(err, TIMED_OUT, { value: true });
      reject(err);
    }, seconds * 1000);
  });
  return Promise.race([invocation, expired]).finally(() => clearTimeout(timer));
}

function lambdaInvokeParameters(input: unknown, stateName: string): { functionName: string; payload: unknown } {
  const params = (input ?? {}) as { FunctionName?: unknown; Payload?: unknown };
  if (typeof params.FunctionName !== 'string' || params.FunctionName === '') {
    throw stateError('States.Runtime', `state "${stateName}": Parameters.FunctionName must resolve to a function name or ARN`, {
      catchable: false,
      retryable: false,
    });
  }
  return { functionName: functionNameOf(params.FunctionName), payload: params.Payload ?? {} };
}

/** Accepts a name, `name:qualifier`, `account:function:name`, or a full ARN, like Lambda Invoke. */
export function functionNameOf(reference: string): string {
  const arn = /^arn:aws[a-z-]*:lambda:[^:]*:[^:]*:function:([^:]+)/.exec(reference);
  if (arn) return arn[1]!;
  const partial = /^\d{12}:function:([^:]+)/.exec(reference);
  if (partial) return partial[1]!;
  return reference.split(':')[0]!;
}

function startExecutionParameters(input: unknown, stateName: string): { stateMachineArn: string; name?: string; input: string } {
  const params = (input ?? {}) as { StateMachineArn?: unknown; Name?: unknown; Input?: unknown };
  if (typeof params.StateMachineArn !== 'string') {
    throw stateError('States.Runtime', `state "${stateName}": Parameters.StateMachineArn must resolve to a string`, {
      catchable: false,
      retryable: false,
    });
  }
  const childInput = params.Input === undefined ? '{}' : typeof params.Input === 'string' ? params.Input : JSON.stringify(params.Input);
  return {
    stateMachineArn: params.StateMachineArn,
    ...(typeof params.Name === 'string' ? { name: params.Name } : {}),
    input: childInput,
  };
}

/** What the local history shows where a task token was passed. */
export const TOKEN_WITHHELD = '[task token withheld from the history]';

function replaceTokenPlaceholder(value: unknown, placeholder: string, token: string): unknown {
  if (typeof value === 'string') return value.split(placeholder).join(token);
  if (Array.isArray(value)) return value.map((v) => replaceTokenPlaceholder(v, placeholder, token));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceTokenPlaceholder(v, placeholder, token)]));
  }
  return value;
}

/** The same timeout the runner applies: TimeoutSeconds, else TimeoutSecondsPath on the effective input. */
function timeoutMs(task: TaskInfo, input: unknown): number {
  if (task.timeoutSeconds !== undefined) return task.timeoutSeconds * 1000;
  if (task.timeoutSecondsPath !== undefined) {
    const seconds = simplePath(input, task.timeoutSecondsPath);
    if (typeof seconds === 'number' && seconds >= 1) return seconds * 1000;
  }
  return MAX_LOCAL_TASK_TIMEOUT_SECONDS * 1000;
}

/** Resolves `$`, `$.a.b`, `$.a[0]`, `$['a']`; anything fancier yields undefined. */
function simplePath(root: unknown, path: string): unknown {
  if (!path.startsWith('$')) return undefined;
  const step = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\])/;
  let rest = path.slice(1);
  let value: unknown = root;
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) return undefined;
    const key = m[1] ?? m[3] ?? m[4] ?? Number(m[2]);
    value = value !== null && typeof value === 'object' ? (value as Record<string | number, unknown>)[key] : undefined;
    rest = rest.slice(m[0].length);
  }
  return value;
}
