/**
 * Starting and waiting for workflow executions, and answering task tokens. The Step Functions adapter implements
 * it (src/adapters/sfn/executions.ts).
 */

/** What the workflow engine says about one execution. */
export interface ExecutionState {
  executionArn: string;
  status: string;
  input?: string;
  output?: string;
  error?: string;
  cause?: string;
}

/** An execution waited for: finished, or still RUNNING when the wait's deadline passed. */
export interface WaitedExecution extends ExecutionState {
  timedOut: boolean;
}

export interface ExecutionsPort {
  /**
   * Starts `name` on the state machine with `input` (JSON-encoded). A name already taken fails, unless
   * `ifExists: 'join'`: then the existing execution's ARN is returned.
   */
  start(stateMachineArn: string, name: string, input: unknown, options?: { ifExists?: 'fail' | 'join' }): Promise<string>;
  /** The execution's status, input and output; undefined when there is no such execution. */
  describe(executionArn: string): Promise<ExecutionState | undefined>;
  /**
   * The names of the state machine's executions in `status` (newest first). For recovery, which looks only at
   * executions that ended without succeeding (few), never on a path that runs per item.
   */
  listNames(stateMachineArn: string, status: 'RUNNING' | 'FAILED' | 'ABORTED' | 'TIMED_OUT'): Promise<string[]>;
  /** Polls until the execution leaves RUNNING or `timeoutMs` passes (then `timedOut`, still RUNNING). */
  wait(executionArn: string, options: { timeoutMs: number; pollMs?: number }): Promise<WaitedExecution>;
  /** Resumes a workflow waiting on `taskToken` with `output` (JSON-encoded). */
  succeedTask(taskToken: string, output: unknown): Promise<void>;
  /** Fails the waiting task with the error name the workflow's Catch matches. */
  failTask(taskToken: string, error: string, cause: string): Promise<void>;
}

/** The ARN an execution named `name` of a state machine has (known before it starts). */
export function executionArnFor(stateMachineArn: string, name: string): string {
  const match = /^(arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}):stateMachine:([^:]+)$/.exec(stateMachineArn);
  if (!match) throw new Error(`not a state machine ARN: ${stateMachineArn}`);
  return `${match[1]}:execution:${match[2]}:${name}`;
}

/** `STATUS: error cause` of an execution that did not succeed. */
export function failureReason(execution: Pick<ExecutionState, 'status' | 'error' | 'cause'>): string {
  return `${execution.status}: ${execution.error ?? ''} ${execution.cause ?? ''}`.trim();
}
