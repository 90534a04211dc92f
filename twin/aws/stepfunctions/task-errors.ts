/**
 * Errors raised inside a running state. The runner matches `Retry`/`Catch`
 * `ErrorEquals` against `name` and exposes `message` as the `Cause`.
 */
export function stateError(name: string, cause: string, options: { catchable?: boolean; retryable?: boolean } = {}): Error {
  const err = new Error(cause);
  err.name = name;
  // The runner reads these two flags; errors lacking them are catchable and retryable.
  if (options.catchable === false) Object.defineProperty(err, 'isCatchable', { value: false });
  if (options.retryable === false) Object.defineProperty(err, 'isRetryable', { value: false });
  return err;
}

/**
 * What Lambda reports for a function error: the error type is the thrown
 * error's `name` (set `this.name` in custom error classes, as on AWS), and the
 * cause is the JSON document `{ errorType, errorMessage, trace }`.
 */
export function lambdaFunctionError(thrown: unknown): Error {
  const err = thrown instanceof Error ? thrown : new Error(String(thrown));
  const errorType = err.name || 'Error';
  const cause = JSON.stringify({ errorType, errorMessage: err.message, trace: (err.stack ?? '').split('\n') });
  return stateError(errorType, cause);
}

/** Step Functions' payload limit between states (256 KiB). */
export const MAX_PAYLOAD_BYTES = 262_144;

export function dataLimitExceeded(what: string, bytes: number): Error {
  // States.DataLimitExceeded is terminal in Step Functions: States.ALL does not catch it.
  return stateError(
    'States.DataLimitExceeded',
    `${what} is ${bytes} bytes, over the ${MAX_PAYLOAD_BYTES}-byte limit; store large data in S3 and pass its key`,
    { catchable: false, retryable: false },
  );
}

/** Step Functions' quota on a Standard execution's history; reaching it fails the execution. */
export const MAX_HISTORY_EVENTS = 25_000;

/** The size Step Functions measures: the UTF-8 bytes of the JSON text. */
export function payloadBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value === undefined ? null : value));
}

/**
 * A function that runs past its configured timeout: Lambda stops it and the
 * task fails; a Retry or Catch on the state decides what happens next.
 */
export function lambdaTimedOut(functionName: string, seconds: number): Error {
  const errorMessage = `Task timed out after ${seconds.toFixed(2)} seconds`;
  return stateError('Sandbox.Timedout', JSON.stringify({ errorType: 'Sandbox.Timedout', errorMessage, function: functionName }));
}
