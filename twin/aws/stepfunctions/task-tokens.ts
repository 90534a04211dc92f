import { randomBytes } from 'node:crypto';
import { sfnErrors } from './errors.js';

export type TaskOutcome =
  | { ok: true; output: string }
  | { ok: false; error?: string; cause?: string }
  /** The execution closed while the task waited; nobody reads the task's result any more. */
  | { ok: false; abandoned: true };

interface WaitingTask {
  executionArn: string;
  stateName: string;
  settle: (outcome: TaskOutcome) => void;
  outcome: Promise<TaskOutcome>;
  expiry?: NodeJS.Timeout;
}

/**
 * Task tokens for `.waitForTaskToken` states. A token is minted per task
 * invocation and stays answerable until the task is settled, times out, or its
 * execution ends; after that Send* answers TaskTimedOut (as Step Functions
 * does for a task that no longer exists) and unknown tokens get InvalidToken.
 */
export class TaskTokens {
  private readonly waiting = new Map<string, WaitingTask>();
  private readonly closed = new Set<string>();

  /**
   * Mints a token whose outcome promise settles on SendTaskSuccess/Failure.
   * `timeoutMs` only retires the token: the runner's own timer raises States.Timeout.
   */
  mint(executionArn: string, stateName: string, timeoutMs?: number): { token: string; outcome: Promise<TaskOutcome> } {
    const token = `${randomBytes(6).toString('hex')}.${randomBytes(42).toString('base64url')}`;
    let settle!: (outcome: TaskOutcome) => void;
    const outcome = new Promise<TaskOutcome>((resolve) => (settle = resolve));
    const task: WaitingTask = { executionArn, stateName, settle, outcome };
    if (timeoutMs !== undefined) {
      task.expiry = setTimeout(() => this.retire(token), timeoutMs);
      task.expiry.unref();
    }
    this.waiting.set(token, task);
    return { token, outcome };
  }

  /** The execution a waiting token belongs to (IAM authorizes SendTask* on its state machine); undefined once closed. */
  executionOf(token: string): string | undefined {
    return this.waiting.get(token)?.executionArn;
  }

  succeed(token: string, output: string): void {
    this.take(token).settle({ ok: true, output });
  }

  fail(token: string, error?: string, cause?: string): void {
    this.take(token).settle({
      ok: false,
      ...(error !== undefined ? { error } : {}),
      ...(cause !== undefined ? { cause } : {}),
    });
  }

  /** Retires a token without settling it (timeout, or its state was abandoned). */
  retire(token: string): void {
    const task = this.waiting.get(token);
    if (task?.expiry) clearTimeout(task.expiry);
    this.waiting.delete(token);
    this.closed.add(token);
  }

  /**
   * The execution closed: retire its tokens and settle their waits, so the
   * runner's pending task (and its timeout timer) ends instead of lingering.
   */
  retireExecution(executionArn: string): void {
    for (const [token, task] of this.waiting) {
      if (task.executionArn !== executionArn) continue;
      this.retire(token);
      task.settle({ ok: false, abandoned: true });
    }
  }

  /** Tokens issued before a restart: known, but their tasks are gone. */
  rememberClosed(tokens: Iterable<string>): void {
    for (const token of tokens) this.closed.add(token);
  }

  waitingCount(): number {
    return this.waiting.size;
  }

  private check(token: string): WaitingTask {
    const task = this.waiting.get(token);
    if (task) return task;
    if (this.closed.has(token)) throw sfnErrors.taskTimedOut();
    throw sfnErrors.invalidToken('Invalid token');
  }

  private take(token: string): WaitingTask {
    const task = this.check(token);
    this.retire(token);
    return task;
  }
}
