import { z } from 'zod';
import { stateError } from './task-errors.js';
import { seededRandom } from '../../../src/lib/seeded-random.js';

/**
 * Service faults the local runner can inject into Task states, so the Retry
 * and Catch clauses written for a real account are exercised, not just read.
 *
 * The Lambda errors are raised where AWS raises them:
 * - `Lambda.TooManyRequestsException`: Lambda refused the invocation (throttled), the function never ran;
 * - `Lambda.ServiceException`: Lambda failed before running the function;
 * - `Sandbox.Timedout`: the function ran (its effects may have landed) and the task failed with a timeout.
 *
 * Any other error name fails the task before it starts (e.g. on a `states:startExecution` state),
 * which with `cause: null` is how a `Cause`-less error is made to reach a Catch.
 */
export const LAMBDA_FAULT_ERRORS = ['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'Sandbox.Timedout'] as const;
export type LambdaFaultError = (typeof LAMBDA_FAULT_ERRORS)[number];

/** `state: '*'` is every Task state that invokes a Lambda function, in every state machine. */
export const EVERY_LAMBDA_TASK = '*';

export const TaskFault = z
  .object({
    /** The Task state's name (states in Map processors included), or `*` for every Lambda task state. */
    state: z.string().min(1),
    /** One of LAMBDA_FAULT_ERRORS for a Lambda task; any error name for another Task state. */
    error: z.string().min(1).max(256),
    /** The first `count` invocations of the state in each execution fail (a retry is an invocation). */
    count: z.number().int().min(1).optional(),
    /** Each invocation fails with this probability (seeded: see FaultOptions.seed). */
    probability: z.number().min(0).max(1).optional(),
    /** The error's Cause; null leaves it out. Default: the message AWS gives for that error. */
    cause: z.string().max(32_768).nullable().optional(),
  })
  .strict()
  .refine((f) => (f.count === undefined) !== (f.probability === undefined), {
    message: 'give exactly one of count (the first N invocations per execution) or probability (0-1)',
    path: ['count'],
  })
  .refine((f) => f.state !== EVERY_LAMBDA_TASK || (LAMBDA_FAULT_ERRORS as readonly string[]).includes(f.error), {
    message: `state "*" (every Lambda task) takes a Lambda error: ${LAMBDA_FAULT_ERRORS.join(', ')}`,
    path: ['error'],
  });
export type TaskFault = z.input<typeof TaskFault>;

export interface FaultOptions {
  /** Seed of the probability draws, so a run with faults can be repeated. Default 1. */
  seed?: number;
}

/** Whether an injected fault fails the task before the function runs or after it ran. */
export type FaultTiming = 'before' | 'after';

export interface InjectedFault {
  error: Error;
  timing: FaultTiming;
}

export function parseTaskFaults(faults: unknown): Array<z.output<typeof TaskFault>> {
  const parsed = z.array(TaskFault).safeParse(faults);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`local Step Functions faults[${issue.path.join('].')}: ${issue.message}`);
  }
  return parsed.data;
}

/** The Cause AWS gives each Lambda error (request ids aside). */
function defaultCause(error: string, functionName: string | undefined): string {
  switch (error) {
    case 'Lambda.TooManyRequestsException':
      return `Rate Exceeded. (Service: AWSLambda; Status Code: 429; Error Code: TooManyRequestsException; function: ${functionName})`;
    case 'Lambda.ServiceException':
      return `Lambda was unable to run the function. (Service: AWSLambda; Status Code: 500; Error Code: ServiceException; function: ${functionName})`;
    case 'Sandbox.Timedout':
      return JSON.stringify({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out (injected)', function: functionName });
    default:
      return `${error} (injected by the local fault switch)`;
  }
}

/**
 * The faults in force and what they did. Counts are kept per execution and
 * state, so `count: 1` throttles the first attempt of a state in every
 * execution and lets its retry through.
 */
export class FaultPlan {
  private faults: Array<z.output<typeof TaskFault>> = [];
  private random: () => number = seededRandom(1);
  private readonly invocations = new Map<string, number>();
  private readonly firedCounts = new Map<string, number>();

  set(faults: unknown, options: FaultOptions = {}): void {
    this.faults = parseTaskFaults(faults);
    this.random = seededRandom(options.seed ?? 1);
    this.invocations.clear();
    this.firedCounts.clear();
  }

  get active(): boolean {
    return this.faults.length > 0;
  }

  /** How many times each `state error` fired since the faults were set. */
  fired(): Record<string, number> {
    return Object.fromEntries(this.firedCounts);
  }

  /** Forgets an execution's per-state counts once it has closed. */
  forget(executionArn: string): void {
    for (const key of this.invocations.keys()) if (key.startsWith(`${executionArn}|`)) this.invocations.delete(key);
  }

  /**
   * The fault for this invocation, if any. `functionName` is set for a Lambda
   * task; Lambda errors apply only there, other errors only elsewhere.
   */
  draw(executionArn: string, stateName: string, functionName: string | undefined): InjectedFault | undefined {
    if (this.faults.length === 0) return undefined;
    const key = `${executionArn}|${stateName}`;
    const n = (this.invocations.get(key) ?? 0) + 1;
    this.invocations.set(key, n);
    for (const fault of this.faults) {
      const lambdaError = (LAMBDA_FAULT_ERRORS as readonly string[]).includes(fault.error);
      if (fault.state === EVERY_LAMBDA_TASK ? functionName === undefined : fault.state !== stateName) continue;
      if (lambdaError !== (functionName !== undefined)) continue;
      const fires = fault.count !== undefined ? n <= fault.count : this.random() < (fault.probability ?? 0);
      if (!fires) continue;
      const label = `${stateName} ${fault.error}`;
      this.firedCounts.set(label, (this.firedCounts.get(label) ?? 0) + 1);
      const cause = fault.cause === undefined ? defaultCause(fault.error, functionName) : fault.cause;
      const error = stateError(fault.error, cause ?? '');
      // Step Functions leaves Cause out of the error output when there is none: the runner reads `message` as the Cause.
      if (cause === null) Object.defineProperty(error, 'message', { value: undefined });
      return { error, timing: fault.error === 'Sandbox.Timedout' ? 'after' : 'before' };
    }
    return undefined;
  }
}
