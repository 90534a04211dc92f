import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What one invocation of a step learned and may reuse until it ends, and never after: the next invocation, on
 * AWS possibly another process, starts from nothing, so what the memo spares is only what this invocation
 * already read itself. Outside an invocation (the CLI, test setup) nothing is remembered.
 */
const memos = new AsyncLocalStorage<Map<string, Map<string, unknown>>>();

/** Runs `work` with a memo of its own (the handler kit wraps every step invocation in one). */
export function withInvocationMemo<T>(work: () => Promise<T>): Promise<T> {
  return memos.run(new Map(), work);
}

/** The running invocation's memo named `name` (one per concern), or undefined outside an invocation. */
export function invocationMemo<V>(name: string): Map<string, V> | undefined {
  const all = memos.getStore();
  if (!all) return undefined;
  let memo = all.get(name);
  if (!memo) {
    memo = new Map<string, unknown>();
    all.set(name, memo);
  }
  return memo as Map<string, V>;
}
