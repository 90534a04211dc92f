/** What an in-process Lambda handler receives besides its event. */
export interface LocalInvocationContext {
  executionArn: string;
  executionName: string;
  stateMachineName: string;
  stateName: string;
  /** The function name from the ARN, e.g. `paperclip-claim`. */
  functionName: string;
}

/**
 * An in-process stand-in for a deployed Lambda function. Declared as a method
 * signature so handlers typed with their own event type are assignable.
 */
export type LocalHandler = {
  handle(event: unknown, context: LocalInvocationContext): unknown;
}['handle'];

/** Keyed by the function name exactly as it appears in the ASL's ARNs (the physical name). */
export type LocalHandlers = Readonly<Record<string, LocalHandler>>;
