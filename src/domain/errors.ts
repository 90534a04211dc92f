/**
 * One error class per Catch/Retry decision in the workflows. The class name is
 * the error name Step Functions matches in ErrorEquals, so renaming one is a
 * workflow change.
 */

export abstract class PaperclipError extends Error {
  /** Whether the workflow may retry the step that threw this. */
  abstract readonly retryable: boolean;
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Bad task input, config or scope: nothing was touched, nothing will be. */
export class InputRejectedError extends PaperclipError {
  override name = 'InputRejectedError';
  readonly retryable = false;
  constructor(
    message: string,
    readonly field: string,
    details: Record<string, unknown> = {},
  ) {
    super(message, { field, ...details });
  }
}

/** The vendor showed a login page or a permission dialog: fail loudly, alert, no retry. */
export class SessionLostError extends PaperclipError {
  override name = 'SessionLostError';
  readonly retryable = false;
}

/** The structured DOM contract (data attributes, row keys) is missing: the UI changed. */
export class StructuredContractMissingError extends PaperclipError {
  override name = 'StructuredContractMissingError';
  readonly retryable = false;
}

/** A read failed transiently (network, slow page). Reads are safe to retry. */
export class ReadFailedError extends PaperclipError {
  override name = 'ReadFailedError';
  readonly retryable = true;
}

/**
 * The write step failed before its commit click: the vendor state is unchanged
 * as far as this process knows. Readback still decides.
 */
export class WriteNotCommittedError extends PaperclipError {
  override name = 'WriteNotCommittedError';
  readonly retryable = false;
}

/**
 * The commit click happened and then something failed (timeout, error page,
 * crash): the write may or may not have landed. Never retried automatically;
 * only an independent readback resolves it.
 */
export class AmbiguousOutcomeError extends PaperclipError {
  override name = 'AmbiguousOutcomeError';
  readonly retryable = false;
}

/**
 * An irreversible write found no approval it could prove from the approvals
 * table and the audit chain (a forged or replayed workflow answer, a changed
 * payload, a self-approval): nothing is written, a person takes over.
 */
export class ApprovalNotProvenError extends PaperclipError {
  override name = 'ApprovalNotProvenError';
  readonly retryable = false;
}

/** The claim changed hands (fencing version moved) between steps: stop, touch nothing. */
export class ClaimFencedError extends PaperclipError {
  override name = 'ClaimFencedError';
  readonly retryable = false;
}

export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}

/**
 * The human-readable message of a workflow error. A Lambda error's Cause is a
 * JSON document ({errorType, errorMessage, trace}); other causes are plain text.
 */
export function failureMessage(failure: { Error?: string; Cause?: string } | null | undefined): string {
  if (!failure) return 'unknown';
  if (failure.Cause) {
    try {
      const parsed = JSON.parse(failure.Cause) as { errorMessage?: unknown };
      if (typeof parsed.errorMessage === 'string') return `${failure.Error ?? 'Error'}: ${parsed.errorMessage}`;
    } catch {
      // plain-text cause
    }
    return `${failure.Error ?? 'Error'}: ${failure.Cause}`;
  }
  return failure.Error ?? 'unknown';
}
