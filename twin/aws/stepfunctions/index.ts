export { startLocalStepFunctions, createStepFunctionsServer } from './server.js';
export type { LocalStepFunctionsEndpoint, LocalStepFunctionsEndpointOptions } from './server.js';
export { LocalStepFunctions, RUNNER_RESTARTED_ERROR } from './service.js';
export { loadProjectStateMachines, localSubstitutions, MAX_LOCAL_TASK_TIMEOUT_SECONDS } from './definition.js';
export type { LocalHandler, LocalHandlers, LocalInvocationContext } from './handlers.js';
export { stateMachineArn, executionArn, lambdaFunctionArn } from './arns.js';
export { LAMBDA_FAULT_ERRORS, EVERY_LAMBDA_TASK, parseTaskFaults } from './faults.js';
export type { TaskFault, FaultOptions, LambdaFaultError } from './faults.js';
