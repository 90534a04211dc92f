/**
 * Errors the Step Functions API returns, with the `__type` codes and message
 * styles real Step Functions uses, so SDK callers see the same exception names.
 */
export class SfnServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly httpStatus = 400,
  ) {
    super(message);
    this.name = type;
  }
}

export const sfnErrors = {
  stateMachineDoesNotExist: (arn: string) => new SfnServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`),
  stateMachineAlreadyExists: (arn: string) => new SfnServiceError('StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`),
  executionDoesNotExist: (arn: string) => new SfnServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`),
  executionAlreadyExists: (arn: string) => new SfnServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`),
  invalidArn: (arn: string, expected: string) =>
    new SfnServiceError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}' (expected ${expected})`),
  invalidName: (name: string, why: string) => new SfnServiceError('InvalidName', `Invalid Name: '${name}' (${why})`),
  invalidDefinition: (detail: string) => new SfnServiceError('InvalidDefinition', `Invalid State Machine Definition: '${detail}'`),
  invalidExecutionInput: (detail: string) => new SfnServiceError('InvalidExecutionInput', `Invalid Execution Input: ${detail}`),
  invalidOutput: (detail: string) => new SfnServiceError('InvalidOutput', `Invalid Output: ${detail}`),
  invalidToken: (detail: string) => new SfnServiceError('InvalidToken', `Invalid Token: '${detail}'`),
  taskTimedOut: () => new SfnServiceError('TaskTimedOut', "Task Timed Out: 'Provided task does not exist anymore'"),
  validation: (field: string, constraint: string, value?: unknown) =>
    new SfnServiceError(
      'ValidationException',
      `1 validation error detected: Value ${value === undefined ? 'null' : `'${String(value)}'`} at '${field}' failed to satisfy constraint: ${constraint}`,
    ),
};
