/**
 * Reading Amazon States Language definitions: which substitution variables a
 * file uses, and where its states are. Pure functions over JSON, shared by the
 * CDK constructs (to wire and grant) and by tests (to assert on the result).
 */

/** `${Name}` as used by definitionSubstitutions; `$$.` context paths never match. */
const VARIABLE = /\$\{([A-Za-z0-9_]+)\}/g;

export function substitutionVariables(definition: string): string[] {
  return [...new Set([...definition.matchAll(VARIABLE)].map((match) => match[1] as string))].sort();
}

/** What CloudFormation does with DefinitionSubstitutions at deploy time. */
export function applySubstitutions(definition: string, values: Readonly<Record<string, string>>): string {
  return definition.replace(VARIABLE, (whole, name: string) => values[name] ?? whole);
}

export interface AslState {
  Type: string;
  Resource?: string;
  Parameters?: Record<string, unknown>;
  Arguments?: Record<string, unknown>;
  Retry?: Array<{ ErrorEquals: string[]; MaxAttempts?: number }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  HeartbeatSeconds?: number;
  Branches?: AslMachine[];
  Iterator?: AslMachine;
  ItemProcessor?: AslMachine;
  [key: string]: unknown;
}

export interface AslMachine {
  StartAt: string;
  States: Record<string, AslState>;
  [key: string]: unknown;
}

/** Every state by name, including those nested in Parallel branches and Map processors. */
export function allStates(machine: AslMachine): Map<string, AslState> {
  const found = new Map<string, AslState>();
  const visit = (current: AslMachine) => {
    for (const [name, state] of Object.entries(current.States)) {
      found.set(name, state);
      for (const branch of state.Branches ?? []) visit(branch);
      if (state.Iterator) visit(state.Iterator);
      if (state.ItemProcessor) visit(state.ItemProcessor);
    }
  };
  visit(machine);
  return found;
}

/** The errors Lambda's own service raises; retrying them re-runs the handler. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/** Wildcards that also match the Lambda service errors. */
const COVERING_ERRORS = ['States.ALL', 'States.TaskFailed'];

/** The Lambda service errors a state's Retry would re-run (directly or via a wildcard). */
export function retriedLambdaServiceErrors(state: AslState): string[] {
  const retried = new Set<string>();
  for (const retrier of state.Retry ?? []) {
    if ((retrier.MaxAttempts ?? 3) === 0) continue;
    for (const error of retrier.ErrorEquals) {
      if (COVERING_ERRORS.includes(error)) for (const e of LAMBDA_SERVICE_ERRORS) retried.add(e);
      if ((LAMBDA_SERVICE_ERRORS as readonly string[]).includes(error)) retried.add(error);
    }
  }
  return [...retried].sort();
}

/** Task states whose integration pattern is .waitForTaskToken. */
export function taskTokenStates(machine: AslMachine): Array<[string, AslState]> {
  return [...allStates(machine)].filter(([, state]) => state.Type === 'Task' && (state.Resource ?? '').endsWith('.waitForTaskToken'));
}
