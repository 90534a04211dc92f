import { deadline, pollUntil } from '../../lib/deadline.js';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { executionArnFor, type ExecutionState, type ExecutionsPort, type WaitedExecution } from '../../app/ports/executions.js';

/**
 * The one way the app starts a workflow execution, waits for it, and answers a
 * workflow waiting on a task token. Owns the Step Functions client.
 */
export class Executions implements ExecutionsPort {
  constructor(private readonly sfn: SFNClient) {}

  /**
   * Starts `name` on the state machine with `input` (JSON-encoded). A name
   * already taken fails with the SDK's ExecutionAlreadyExists, unless
   * `ifExists: 'join'`: then the existing execution's ARN is returned, for a
   * caller that only wants the run of that name to happen once.
   */
  async start(stateMachineArn: string, name: string, input: unknown, options: { ifExists?: 'fail' | 'join' } = {}): Promise<string> {
    try {
      const started = await this.sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
      return started.executionArn!;
    } catch (error) {
      if (options.ifExists === 'join' && error instanceof ExecutionAlreadyExists) return executionArnFor(stateMachineArn, name);
      throw error;
    }
  }

  /** The execution's status, input and output; undefined when there is no such execution. */
  async describe(executionArn: string): Promise<ExecutionState | undefined> {
    try {
      const d = await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
      return {
        executionArn,
        status: d.status ?? 'UNKNOWN',
        ...(d.input !== undefined ? { input: d.input } : {}),
        ...(d.output !== undefined ? { output: d.output } : {}),
        ...(d.error !== undefined ? { error: d.error } : {}),
        ...(d.cause !== undefined ? { cause: d.cause } : {}),
      };
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return undefined;
      throw error;
    }
  }

  /** Polls until the execution leaves RUNNING or `timeoutMs` passes (then `timedOut`, still RUNNING). */
  async wait(executionArn: string, options: { timeoutMs: number; pollMs?: number }): Promise<WaitedExecution> {
    let last: ExecutionState | undefined;
    const closed = await pollUntil(
      deadline(options.timeoutMs),
      async () => {
        last = await this.describe(executionArn);
        if (!last) throw new Error(`execution ${executionArn} does not exist`);
        return last.status !== 'RUNNING';
      },
      options.pollMs ?? 250,
    );
    return { ...last!, timedOut: !closed };
  }

  /** Resumes a workflow waiting on `taskToken` with `output` (JSON-encoded). */
  async succeedTask(taskToken: string, output: unknown): Promise<void> {
    await this.sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
  }

  /** Fails the waiting task with the error name the workflow's Catch matches. */
  async failTask(taskToken: string, error: string, cause: string): Promise<void> {
    await this.sfn.send(new SendTaskFailureCommand({ taskToken, error, cause }));
  }
}
