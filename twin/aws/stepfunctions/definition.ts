import {
  STATE_MACHINES,
  WORKFLOW_FUNCTIONS,
  functionArnVariable,
  functionPhysicalName,
  stateMachineArnVariable,
  stateMachinePhysicalName,
} from '../../../src/contracts/functions.js';
import {
  isDistributedMap,
  loadStateMachineDefinition,
  substitutionVariables,
  walkStates,
  type AslMachine,
  type AslState,
} from '../../../src/contracts/asl.js';
import { lambdaFunctionArn, stateMachineArn, type ArnScope } from './arns.js';
import { sfnErrors } from './errors.js';
import { validateAsl } from './asl-validation.js';
import type { StateMachineDefinition } from './library.js';

/**
 * The substitutions the CDK app provides on AWS, pointing at local ARNs:
 * `${ClaimFunctionArn}` -> arn:aws:lambda:<region>:<account>:function:<prefix>-claim,
 * `${GuardedWriteStateMachineArn}` -> arn:aws:states:...:stateMachine:<prefix>-guarded-write.
 */
export function localSubstitutions(prefix: string, region: string, accountId: string): Record<string, string> {
  const scope: ArnScope = { region, accountId };
  const subs: Record<string, string> = {};
  for (const fn of WORKFLOW_FUNCTIONS) {
    subs[functionArnVariable(fn.id)] = lambdaFunctionArn(scope, functionPhysicalName(prefix, fn.name));
  }
  for (const sm of STATE_MACHINES) {
    subs[stateMachineArnVariable(sm.id)] = stateMachineArn(scope, stateMachinePhysicalName(prefix, sm.name));
  }
  return subs;
}

export type TaskIntegration =
  /** Resource is a function ARN: the state input is the event, the result is the output. */
  | { kind: 'lambda-function'; functionName: string }
  /** arn:aws:states:::lambda:invoke[.waitForTaskToken] */
  | { kind: 'lambda-invoke'; waitForTaskToken: boolean }
  /** arn:aws:states:::states:startExecution[.sync[:2]] */
  | { kind: 'start-execution'; pattern: 'fire-and-forget' | 'sync' | 'sync:2' }
  /** A Map state in DISTRIBUTED mode, which the runner executes itself (see DistributedMapInfo). */
  | { kind: 'distributed-map' };

/**
 * A Distributed Map: items from S3 (ItemReader) or from the input, one child
 * execution of the ItemProcessor per item, results to S3 (ResultWriter).
 * The runner rewrites the state into a Task it handles, so the library's own
 * Retry, Catch, ResultSelector, ResultPath and OutputPath apply unchanged.
 */
export interface DistributedMapInfo {
  stateName: string;
  /** Label, or the state name: part of the Map Run ARN and the child executions' state machine name. */
  label: string;
  processor: PreparedDefinition;
  readerInputType?: 'JSON';
  writer?: { outputType: 'JSON' | 'JSONL'; transformation: 'NONE' | 'COMPACT' };
}

/** The Resource a Distributed Map state is rewritten to; not a real Step Functions resource. */
export const LOCAL_DISTRIBUTED_MAP_RESOURCE = 'arn:aws:states:::local:distributedMap';

export interface TaskInfo {
  stateName: string;
  resource: string;
  integration: TaskIntegration;
  timeoutSeconds?: number;
  timeoutSecondsPath?: string;
}

export interface PreparedDefinition {
  /** What the library runs: the definition with Task timeouts made explicit. */
  runnable: StateMachineDefinition;
  tasks: Map<string, TaskInfo>;
  stateTypes: Map<string, string>;
  statesWithRetry: string[];
  distributedMaps: Map<string, DistributedMapInfo>;
}

/**
 * The library's Task timeout defaults to 60 s, where Step Functions waits
 * (practically) forever. Node timers cap at 2^31-1 ms, so "forever" locally
 * is ~24.8 days.
 */
export const MAX_LOCAL_TASK_TIMEOUT_SECONDS = 2_147_483;

const LAMBDA_FUNCTION_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:([A-Za-z0-9_-]+)(?::[A-Za-z0-9_$-]+)?$/;

export function classifyResource(resource: string): TaskIntegration | undefined {
  const fn = LAMBDA_FUNCTION_ARN.exec(resource);
  if (fn) return { kind: 'lambda-function', functionName: fn[1]! };
  switch (resource) {
    case 'arn:aws:states:::lambda:invoke':
      return { kind: 'lambda-invoke', waitForTaskToken: false };
    case 'arn:aws:states:::lambda:invoke.waitForTaskToken':
      return { kind: 'lambda-invoke', waitForTaskToken: true };
    case 'arn:aws:states:::states:startExecution':
      return { kind: 'start-execution', pattern: 'fire-and-forget' };
    case 'arn:aws:states:::states:startExecution.sync':
      return { kind: 'start-execution', pattern: 'sync' };
    case 'arn:aws:states:::states:startExecution.sync:2':
      return { kind: 'start-execution', pattern: 'sync:2' };
    default:
      return undefined;
  }
}

/** Distributed Map fields the local runner implements; anything else is refused at creation rather than ignored. */
const DISTRIBUTED_MAP_FIELDS = new Set([
  'Type',
  'Comment',
  'ItemProcessor',
  'ItemReader',
  'ItemsPath',
  'MaxConcurrency',
  'MaxConcurrencyPath',
  'ToleratedFailurePercentage',
  'ToleratedFailurePercentagePath',
  'ToleratedFailureCount',
  'ToleratedFailureCountPath',
  'ResultWriter',
  'Label',
  'InputPath',
  'ResultPath',
  'ResultSelector',
  'OutputPath',
  'Retry',
  'Catch',
  'Next',
  'End',
]);

function prepareDistributedMap(name: string, state: AslState): { info: DistributedMapInfo; task: Record<string, unknown> } {
  const refuse = (why: string) => {
    throw sfnErrors.invalidDefinition(
      `state "${name}": ${why} (the local runner implements ItemReader JSON from S3, ` +
        `ResultWriter to S3, MaxConcurrency[Path], ToleratedFailure{Percentage,Count}[Path])`,
    );
  };
  for (const field of Object.keys(state)) if (!DISTRIBUTED_MAP_FIELDS.has(field)) refuse(`${field} is not supported in a Distributed Map`);
  const reader = state['ItemReader'] as { Resource?: string; ReaderConfig?: { InputType?: string }; Parameters?: unknown } | undefined;
  if (reader && (reader.Resource !== 'arn:aws:states:::s3:getObject' || (reader.ReaderConfig?.InputType ?? 'JSON') !== 'JSON')) {
    refuse('ItemReader must be arn:aws:states:::s3:getObject with InputType JSON');
  }
  const writer = state['ResultWriter'] as
    | { Resource?: string; Parameters?: unknown; WriterConfig?: { OutputType?: string; Transformation?: string } }
    | undefined;
  const outputType = writer?.WriterConfig?.OutputType ?? 'JSON';
  const transformation = writer?.WriterConfig?.Transformation ?? 'NONE';
  if (writer && (writer.Resource !== 'arn:aws:states:::s3:putObject' || !writer.Parameters)) {
    refuse('ResultWriter must be arn:aws:states:::s3:putObject with Parameters');
  }
  if (writer && (!['JSON', 'JSONL'].includes(outputType) || !['NONE', 'COMPACT'].includes(transformation))) {
    refuse('ResultWriter.WriterConfig must use OutputType JSON or JSONL and Transformation NONE or COMPACT');
  }
  const { ProcessorConfig: _config, ...processorMachine } = state['ItemProcessor'] as Record<string, unknown>;
  const processor = prepareDefinition(JSON.stringify(processorMachine), { validate: false });
  const parameters: Record<string, unknown> = {};
  if (reader) parameters['reader'] = reader.Parameters ?? {};
  else parameters['items.$'] = state['ItemsPath'] ?? '$';
  const numberField = (field: string, key: string) => {
    if (state[`${field}Path`] !== undefined) parameters[`${key}.$`] = state[`${field}Path`];
    else if (state[field] !== undefined) parameters[key] = state[field];
  };
  numberField('MaxConcurrency', 'maxConcurrency');
  numberField('ToleratedFailurePercentage', 'toleratedFailurePercentage');
  numberField('ToleratedFailureCount', 'toleratedFailureCount');
  if (writer) parameters['writer'] = writer.Parameters;
  const task: Record<string, unknown> = { Type: 'Task', Resource: LOCAL_DISTRIBUTED_MAP_RESOURCE, Parameters: parameters };
  for (const field of ['Comment', 'InputPath', 'ResultPath', 'ResultSelector', 'OutputPath', 'Retry', 'Catch', 'Next', 'End']) {
    if (state[field] !== undefined) task[field] = state[field];
  }
  return {
    task,
    info: {
      stateName: name,
      label: typeof state['Label'] === 'string' ? state['Label'] : name,
      processor,
      ...(reader ? { readerInputType: 'JSON' as const } : {}),
      ...(writer ? { writer: { outputType: outputType as 'JSON' | 'JSONL', transformation: transformation as 'NONE' | 'COMPACT' } } : {}),
    },
  };
}

/**
 * Validates a definition the way CreateStateMachine must (JSON, ASL schema,
 * unique state names, resources the local runner can execute) and returns
 * what an execution needs. Throws InvalidDefinition with the reason.
 */
export function prepareDefinition(definitionText: string, options: { validate?: boolean } = {}): PreparedDefinition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(definitionText);
  } catch (err) {
    throw sfnErrors.invalidDefinition(`INVALID_JSON_DESCRIPTION: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw sfnErrors.invalidDefinition('SCHEMA_VALIDATION_FAILED: the definition must be a JSON object');
  }
  const unresolved = substitutionVariables(definitionText);
  if (unresolved.length > 0) {
    throw sfnErrors.invalidDefinition(`unresolved placeholder(s) ${unresolved.map((name) => `\${${name}}`).join(', ')}`);
  }
  // Definitions loaded from the data folder were validated when created.
  if (options.validate ?? true) {
    try {
      // The validator annotates the object it checks; give it a copy.
      validateAsl(structuredClone(parsed) as StateMachineDefinition);
    } catch (err) {
      throw sfnErrors.invalidDefinition(`SCHEMA_VALIDATION_FAILED: ${(err as Error).message.trim()}`);
    }
  }

  const runnable = structuredClone(parsed) as StateMachineDefinition;
  const tasks = new Map<string, TaskInfo>();
  const stateTypes = new Map<string, string>();
  const statesWithRetry: string[] = [];
  const distributedMaps = new Map<string, DistributedMapInfo>();

  // The runnable copy is walked and changed in place: a Distributed Map is replaced by the Task the runner handles,
  // and the walk still goes through the processor it replaced (the names there must be unique too).
  for (const { name, state, machine, where } of walkStates(runnable as unknown as AslMachine)) {
    if (stateTypes.has(name)) {
      throw sfnErrors.invalidDefinition(
        `SCHEMA_VALIDATION_FAILED: state name "${name}" is used twice (${where}); state names must be unique in the whole state machine`,
      );
    }
    stateTypes.set(name, state.Type ?? 'Unknown');
    if (Array.isArray(state.Retry) && state.Retry.length > 0) statesWithRetry.push(name);
    if (state.Type === 'Task') tasks.set(name, taskInfo(name, state));
    if (isDistributedMap(state)) {
      // Its processor runs as separate child executions; here it only takes part in the name check.
      const { info, task } = prepareDistributedMap(name, state);
      distributedMaps.set(name, info);
      tasks.set(name, { stateName: name, resource: LOCAL_DISTRIBUTED_MAP_RESOURCE, integration: { kind: 'distributed-map' } });
      machine.States[name] = task as AslState;
    }
  }
  // After the walk, so the processors of Distributed Maps (child executions with their own definition) are left alone.
  for (const { state } of walkStates(runnable as unknown as AslMachine)) {
    if (state.Type === 'Task' && state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) {
      state.TimeoutSeconds = MAX_LOCAL_TASK_TIMEOUT_SECONDS;
    }
  }
  return { runnable, tasks, stateTypes, statesWithRetry, distributedMaps };
}

/** A Task state's integration, checked for what the local runner needs of it. */
function taskInfo(name: string, state: AslState): TaskInfo {
  const resource = state.Resource ?? '';
  const integration = classifyResource(resource);
  if (!integration) {
    throw sfnErrors.invalidDefinition(
      `state "${name}": resource ${resource} is not supported by the local runner ` +
        '(supported: Lambda function ARNs, lambda:invoke[.waitForTaskToken], states:startExecution[.sync[:2]])',
    );
  }
  if (integration.kind === 'lambda-invoke' || integration.kind === 'start-execution') {
    const params = state.Parameters;
    const needs = integration.kind === 'lambda-invoke' ? 'FunctionName' : 'StateMachineArn';
    if (!params || !(needs in params || `${needs}.$` in params)) {
      throw sfnErrors.invalidDefinition(`state "${name}": Parameters.${needs} is required for ${resource}`);
    }
  }
  if (integration.kind === 'lambda-invoke' && integration.waitForTaskToken) {
    if (!JSON.stringify(state.Parameters ?? null).includes('$$.Task.Token')) {
      throw sfnErrors.invalidDefinition(`state "${name}": a .waitForTaskToken task must pass $$.Task.Token in its Parameters`);
    }
  }
  return {
    stateName: name,
    resource,
    integration,
    ...(state.TimeoutSeconds !== undefined ? { timeoutSeconds: state.TimeoutSeconds } : {}),
    ...(state.TimeoutSecondsPath !== undefined ? { timeoutSecondsPath: state.TimeoutSecondsPath } : {}),
  };
}

/**
 * Every project state machine (STATE_MACHINES) read from `dir` with local
 * substitutions, ready for the stack's `stateMachines` option.
 */
export function loadProjectStateMachines(
  dir: string,
  prefix: string,
  region: string,
  accountId: string,
): Array<{ name: string; definition: string }> {
  const substitutions = localSubstitutions(prefix, region, accountId);
  return STATE_MACHINES.map((sm) => ({
    name: stateMachinePhysicalName(prefix, sm.name),
    definition: loadStateMachineDefinition(`${dir}/${sm.file}`, substitutions),
  }));
}
