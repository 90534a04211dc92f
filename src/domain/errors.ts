/**
 * The error model: one class per Catch/Retry decision in the workflows, all
 * made by {@link workflowError}. An instance's `name` is the error name Step
 * Functions matches in ErrorEquals (a Lambda reports `error.name` as its
 * errorType), so renaming one is a workflow change; test/domain/errors.test.ts
 * checks every name the ASL catches is defined here.
 *
 * Inside one process, tell errors apart with `instanceof`. Only where an error
 * has crossed a process boundary — a Catch clause's `{Error, Cause}` in the
 * workflow state, a `write_failed` entry in the audit journal, a task failure
 * sent with SendTaskFailure — is there no object left, only its name: compare
 * with the class's `errorName` (never a string literal), as
 * src/domain/next-after-readback.ts and src/report/classify.ts do.
 *
 * Whether a step is retried is the workflow's decision (Retry in the ASL), not
 * the error's: the classes carry no retry flag.
 */

/**
 * The base of every error class in Paperclip's code, workflow errors and the rest (a refused approval, a bad
 * data folder, a planner conflict). Each names itself with a string literal, not its class name, which a
 * minifying bundler may rename; the emulated AWS services and the test back offices (twin/aws, backoffices/simulator,
 * backoffices/ledgerly) raise the errors of what they emulate and stand outside it. test/lint/error-base.test.ts keeps
 * every class in the product's folders on it.
 */
export abstract class NamedError extends Error {
  abstract override readonly name: string;
}

/** A workflow error: one Catch/Retry decision; see the top of this file. */
export abstract class PaperclipError extends NamedError {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    /** `{ cause }`: the error this one explains, kept for logs and the stack. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A PaperclipError subclass whose instances are named `name`. The name is a
 * string literal rather than the class's own name, which a minifying bundler
 * may rename; `errorName` is the same string on the class, for comparing with
 * a name that came across a process boundary.
 */
export function workflowError<const N extends string>(name: N) {
  return class extends PaperclipError {
    static readonly errorName: N = name;
    override readonly name: N = name;
  };
}

/** Bad task input, config or scope: nothing was touched, nothing will be. */
export class InputRejectedError extends workflowError('InputRejectedError') {
  constructor(
    message: string,
    readonly field: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, { field, ...details }, options);
  }
}

/** The vendor showed a login page or a permission dialog: fail loudly, alert, no retry. */
export class SessionLostError extends workflowError('SessionLostError') {}

/** The structured DOM contract (data attributes, row keys) is missing: the UI changed. */
export class StructuredContractMissingError extends workflowError('StructuredContractMissingError') {}

/**
 * A list read short of the row count its page states (`共 30 条`, `1–20 of 30`, a grid's aria-rowcount): never a short
 * list. A structured contract error to the workflows (the same Catch), with both numbers in its details.
 */
export class ListIncompleteError extends StructuredContractMissingError {
  constructor(
    message: string,
    readonly stated: number,
    readonly read: number,
  ) {
    super(message, { stated, read });
  }
}

/** A read failed transiently (network, slow page). Reads are safe to retry; the ASL retries them. */
export class ReadFailedError extends workflowError('ReadFailedError') {}

/**
 * The write step failed before its commit click: the vendor state is unchanged
 * as far as this process knows. Readback still decides.
 */
export class WriteNotCommittedError extends workflowError('WriteNotCommittedError') {}

/**
 * The commit click happened and then something failed (timeout, error page,
 * crash): the write may or may not have landed. Never retried automatically;
 * only an independent readback resolves it.
 */
export class AmbiguousOutcomeError extends workflowError('AmbiguousOutcomeError') {}

/**
 * An irreversible write found no approval it could prove from the approvals
 * table and the audit chain (a forged or replayed workflow answer, a changed
 * payload, a self-approval): nothing is written, a person takes over.
 */
export class ApprovalNotProvenError extends workflowError('ApprovalNotProvenError') {}

/** The claim changed hands (fencing version moved) between steps: stop, touch nothing. */
export class ClaimFencedError extends workflowError('ClaimFencedError') {}

/**
 * Every slot of the identity's vendor sessions (config `vendor_sessions.max_per_identity`) stayed held by other
 * tasks for the whole wait: nothing was opened or touched at the vendor, so the step is safe to run again; the
 * ASL retries it with backoff on every browser task state.
 */
export class VendorSessionsBusyError extends workflowError('VendorSessionsBusyError') {}

/**
 * A typed parameter is not the vendor's own figure (the pack's `confirm`): the task asked for something the vendor
 * does not show. Found by the pre-state read, before any approval is requested; the item ends rejected, nothing written.
 */
export class VendorFigureMismatchError extends workflowError('VendorFigureMismatchError') {}

/** Every error class a workflow step throws, for checks that the ASL catches only names defined here. */
export const WORKFLOW_ERRORS = [
  InputRejectedError,
  SessionLostError,
  StructuredContractMissingError,
  ReadFailedError,
  WriteNotCommittedError,
  AmbiguousOutcomeError,
  ApprovalNotProvenError,
  ClaimFencedError,
  VendorSessionsBusyError,
  VendorFigureMismatchError,
] as const;

/**
 * Task failures that are never thrown: the approval pages send them to a
 * waiting workflow with SendTaskFailure, so only the name crosses over.
 */
export const TASK_FAILURES = {
  /** A person rejected the approval; the workflow closes the item as rejected. */
  approvalRejected: 'ApprovalRejected',
} as const;

/** Every error name the workflows may match in ErrorEquals, besides the States.* ones. */
export const WORKFLOW_ERROR_NAMES: ReadonlySet<string> = new Set([
  ...WORKFLOW_ERRORS.map((error) => error.errorName),
  ...Object.values(TASK_FAILURES),
]);

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
