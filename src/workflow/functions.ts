/**
 * The Lambda functions the workflows call, in one list shared by the CDK app
 * (which creates them) and the local Step Functions runner (which maps the same
 * ARNs onto in-process handlers). Each entry's handler lives in lambdas/<name>.ts;
 * its timeout is the one Lambda enforces on AWS and the local runner enforces here.
 */
export const WORKFLOW_FUNCTIONS = [
  { id: 'ReadList', name: 'read-list', browser: true, timeoutSeconds: 300 },
  { id: 'ValidateRoute', name: 'validate-route', browser: false, timeoutSeconds: 30 },
  { id: 'Claim', name: 'claim', browser: false, timeoutSeconds: 30 },
  { id: 'RequestApproval', name: 'request-approval', browser: false, timeoutSeconds: 30 },
  { id: 'Snapshot', name: 'snapshot', browser: true, timeoutSeconds: 300 },
  { id: 'BrowserWrite', name: 'browser-write', browser: true, timeoutSeconds: 300 },
  { id: 'Readback', name: 'readback', browser: true, timeoutSeconds: 300 },
  { id: 'Compensate', name: 'compensate', browser: false, timeoutSeconds: 30 },
  { id: 'Complete', name: 'complete', browser: false, timeoutSeconds: 30 },
  { id: 'Takeover', name: 'takeover', browser: false, timeoutSeconds: 30 },
  // Reads every item's result from S3, renders the pages and seals the batch folder: sized for 10,000 items (docs/deploy.md).
  { id: 'SummarizeBatch', name: 'summarize-batch', browser: false, timeoutSeconds: 900 },
] as const;

/**
 * Each function's timeout in seconds by local physical name (`<prefix>-<name>`):
 * the local Step Functions runner fails an invocation that runs longer, as
 * Lambda does with the same number the CDK app deploys.
 */
export function functionTimeouts(prefix: string): Record<string, number> {
  return Object.fromEntries(WORKFLOW_FUNCTIONS.map((fn) => [functionPhysicalName(prefix, fn.name), fn.timeoutSeconds]));
}

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
