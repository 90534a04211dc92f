/**
 * The Lambda functions the workflows call, in one list shared by the CDK app
 * (which creates them) and the local Step Functions runner (which maps the same
 * ARNs onto in-process handlers). Each entry's handler lives in lambdas/<name>.ts.
 */
export const WORKFLOW_FUNCTIONS = [
  { id: 'ReadList', name: 'read-list', browser: true },
  { id: 'ValidateRoute', name: 'validate-route', browser: false },
  { id: 'Claim', name: 'claim', browser: false },
  { id: 'RequestApproval', name: 'request-approval', browser: false },
  { id: 'Snapshot', name: 'snapshot', browser: true },
  { id: 'BrowserWrite', name: 'browser-write', browser: true },
  { id: 'Readback', name: 'readback', browser: true },
  { id: 'Compensate', name: 'compensate', browser: true },
  { id: 'Complete', name: 'complete', browser: false },
  { id: 'Takeover', name: 'takeover', browser: false },
  { id: 'SummarizeBatch', name: 'summarize-batch', browser: false },
] as const;

export type WorkflowFunctionId = (typeof WORKFLOW_FUNCTIONS)[number]['id'];
export type WorkflowFunctionName = (typeof WORKFLOW_FUNCTIONS)[number]['name'];

/** The state machines; their ASL lives in statemachines/<file>. */
export const STATE_MACHINES = [
  { id: 'Batch', name: 'batch', file: 'batch.asl.json' },
  { id: 'GuardedWrite', name: 'guarded-write', file: 'guarded-write.asl.json' },
] as const;

export type StateMachineName = (typeof STATE_MACHINES)[number]['name'];

/** `${ClaimFunctionArn}` in an ASL file is replaced by the claim function's ARN. */
export function functionArnVariable(id: WorkflowFunctionId): string {
  return `${id}FunctionArn`;
}

export function stateMachineArnVariable(id: (typeof STATE_MACHINES)[number]['id']): string {
  return `${id}StateMachineArn`;
}

/** Physical names used locally and as the suffix of deployed names. */
export function functionPhysicalName(prefix: string, name: WorkflowFunctionName): string {
  return `${prefix}-${name}`;
}
