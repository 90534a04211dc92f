import { sfnErrors, type SfnServiceError } from './errors.js';

export interface ArnScope {
  region: string;
  accountId: string;
}

export function stateMachineArn(scope: ArnScope, name: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:stateMachine:${name}`;
}

export function executionArn(scope: ArnScope, stateMachineName: string, executionName: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:execution:${stateMachineName}:${executionName}`;
}

export function lambdaFunctionArn(scope: ArnScope, functionName: string): string {
  return `arn:aws:lambda:${scope.region}:${scope.accountId}:function:${functionName}`;
}

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):(\d{12}):stateMachine:([^:]+)$/;
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):(\d{12}):execution:([^:]+):([^:]+)$/;

export function parseStateMachineArn(arn: string): { region: string; accountId: string; name: string } | undefined {
  const m = STATE_MACHINE_ARN.exec(arn);
  return m ? { region: m[1]!, accountId: m[2]!, name: m[3]! } : undefined;
}

export function parseExecutionArn(arn: string): { region: string; accountId: string; stateMachineName: string; name: string } | undefined {
  const m = EXECUTION_ARN.exec(arn);
  return m ? { region: m[1]!, accountId: m[2]!, stateMachineName: m[3]!, name: m[4]! } : undefined;
}

export function requireStateMachineArn(arn: string): void {
  if (!parseStateMachineArn(arn)) throw sfnErrors.invalidArn(arn, 'arn:aws:states:<region>:<account>:stateMachine:<name>');
}

export function requireExecutionArn(arn: string): void {
  if (!parseExecutionArn(arn)) throw sfnErrors.invalidArn(arn, 'arn:aws:states:<region>:<account>:execution:<stateMachine>:<name>');
}

/**
 * Step Functions' naming rule for state machines and executions: 1-80
 * characters, none of whitespace, brackets, wildcards, the listed punctuation,
 * or control characters. Too long/short is a ValidationException; a bad
 * character is InvalidName (as the real service answers).
 */
// eslint-disable-next-line no-control-regex
// biome-ignore lint/suspicious/noControlCharactersInRegex: Step Functions refuses control characters in names, so the check lists them
const FORBIDDEN_NAME_CHARS = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

export function nameProblem(field: string, name: string): SfnServiceError | undefined {
  if (name.length < 1 || name.length > 80) {
    return sfnErrors.validation(field, 'Member must have length between 1 and 80', name);
  }
  const bad = FORBIDDEN_NAME_CHARS.exec(name);
  if (bad) {
    return sfnErrors.invalidName(name, `character ${JSON.stringify(bad[0])} is not allowed; use letters, digits, '-', '_' or '.'`);
  }
  return undefined;
}
