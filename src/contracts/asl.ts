import { readFileSync } from 'node:fs';

/**
 * Reading Amazon States Language definitions, once for every reader: the CDK
 * constructs (to wire and grant), the local Step Functions runner (to load and
 * run) and tests (to assert on a file or a synthesized template). Which
 * substitution variables a file uses, how they are replaced, and where its
 * states are, nested ones included.
 */

/**
 * `${Name}` as definitionSubstitutions writes it (CloudFormation replaces it as
 * plain text). `$$.` context paths and JSONPath `$.` never match: they have no `{`.
 */
const VARIABLE = /\$\{([A-Za-z0-9_][A-Za-z0-9_.-]*)\}/g;

/** The variables a definition uses, each once, sorted. */
export function substitutionVariables(definition: string): string[] {
  return [...new Set([...definition.matchAll(VARIABLE)].map((match) => match[1] as string))].sort();
}

/** What CloudFormation does with DefinitionSubstitutions at deploy time: a variable without a value stays as it is. */
export function applySubstitutions(definition: string, values: Readonly<Record<string, string>>): string {
  return definition.replace(VARIABLE, (whole, name: string) => values[name] ?? whole);
}

/**
 * Applies the substitutions and fails naming every variable left without a
 * value and the source, or when the result is not JSON (a number substituted
 * outside a string, say, that was not a number).
 */
export function substituteDefinition(text: string, substitutions: Readonly<Record<string, string>>, source = 'definition'): string {
  const missing = substitutionVariables(text).filter((name) => substitutions[name] === undefined);
  if (missing.length > 0) {
    throw new Error(
      `${source}: unresolved placeholder(s) ${missing.map((n) => `\${${n}}`).join(', ')}; add them to the substitutions ` +
        `(known: ${Object.keys(substitutions).sort().join(', ') || 'none'})`,
    );
  }
  const result = applySubstitutions(text, substitutions);
  try {
    JSON.parse(result);
  } catch (err) {
    throw new Error(`${source}: not valid JSON after substitution: ${(err as Error).message}`);
  }
  return result;
}

/** The text of an ASL file as written, variables unreplaced. */
export function readStateMachineFile(file: string): string {
  return readFileSync(file, 'utf8');
}

/** Reads an ASL file and substitutes its variables; returns the definition text for CreateStateMachine. */
export function loadStateMachineDefinition(file: string, substitutions: Readonly<Record<string, string>>): string {
  return substituteDefinition(readStateMachineFile(file), substitutions, file);
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
  ItemProcessor?: AslMachine & { ProcessorConfig?: { Mode?: string; ExecutionType?: string } };
  [key: string]: unknown;
}

export interface AslMachine {
  StartAt: string;
  States: Record<string, AslState>;
  [key: string]: unknown;
}

/** A Map state whose items run as child executions (Distributed Map) rather than inside the parent. */
export function isDistributedMap(state: AslState): boolean {
  return state.Type === 'Map' && state.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
}

/** One state met by walkStates: its name, the machine whose States hold it, and where that machine is. */
export interface StateVisit {
  name: string;
  state: AslState;
  /** The machine (top level, branch or processor) whose `States` has this state. */
  machine: AslMachine;
  /** `top level`, `in Map "M"`, `in Distributed Map "M"`, `in branch 0 of Parallel "P"`. */
  where: string;
}

/**
 * Every state, depth first, each followed by the states nested in it (Parallel
 * branches, Map processors and iterators). The nested states are those of the
 * state as it was met: a caller may replace `machine.States[name]` when it is
 * visited and still be shown what was inside it. Tolerates a machine without
 * `States` (an unvalidated definition): it has no states.
 */
export function* walkStates(machine: AslMachine, where = 'top level'): Generator<StateVisit> {
  for (const [name, state] of Object.entries(machine.States ?? {})) {
    yield { name, state, machine, where };
    for (const [i, branch] of (state.Branches ?? []).entries()) yield* walkStates(branch, `in branch ${i} of Parallel "${name}"`);
    const kind = isDistributedMap(state) ? 'Distributed Map' : 'Map';
    for (const processor of [state.ItemProcessor, state.Iterator]) if (processor) yield* walkStates(processor, `in ${kind} "${name}"`);
  }
}

/** Every state by name, including those nested in Parallel branches and Map processors. */
export function allStates(machine: AslMachine): Map<string, AslState> {
  return new Map([...walkStates(machine)].map(({ name, state }) => [name, state]));
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
