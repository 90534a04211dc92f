import { sizingOf } from './sizing.js';

/** Memory and timeout from the measured sizing (src/workflow/sizing.ts, the table in docs/deploy.md). */
function sized<const F extends { name: string; browser: boolean }>(fn: F): F & { memoryMb: number; timeoutSeconds: number } {
  const size = sizingOf(fn.name);
  if (size.browser !== fn.browser) throw new Error(`${fn.name}: browser is ${fn.browser} here but ${size.browser} in its sizing row`);
  return { ...fn, memoryMb: size.memoryMb, timeoutSeconds: size.timeoutSeconds };
}

/**
 * The Lambda functions the workflows call, in one list shared by the CDK app
 * (which creates them) and the local Step Functions runner (which maps the same
 * ARNs onto in-process handlers). Each entry's handler lives in lambdas/<name>.ts;
 * its memory and timeout are derived from the benchmark's measurements
 * (sizing.ts): the timeout is the one Lambda enforces on AWS and the local
 * runner enforces here, the memory the one CDK deploys.
 */
export const WORKFLOW_FUNCTIONS = [
  sized({ id: 'ReadList', name: 'read-list', browser: true }),
  sized({ id: 'ValidateRoute', name: 'validate-route', browser: false }),
  sized({ id: 'Claim', name: 'claim', browser: false }),
  sized({ id: 'RequestApproval', name: 'request-approval', browser: false }),
  sized({ id: 'Snapshot', name: 'snapshot', browser: true }),
  sized({ id: 'BrowserWrite', name: 'browser-write', browser: true }),
  sized({ id: 'Readback', name: 'readback', browser: true }),
  sized({ id: 'Compensate', name: 'compensate', browser: false }),
  sized({ id: 'Complete', name: 'complete', browser: false }),
  sized({ id: 'Takeover', name: 'takeover', browser: false }),
  // Reads every item's result from S3, renders the pages and seals the batch folder (docs/deploy.md).
  sized({ id: 'SummarizeBatch', name: 'summarize-batch', browser: false }),
] as const;

/** The handler behind the approval page (not a workflow step): GET shows the request, POST records the decision. */
export const APPROVAL_HTTP_FUNCTION = sized({ name: 'approval-http', browser: false });

/**
 * The daily digest writer (not a workflow step): an EventBridge rule invokes it every hour on AWS; locally the
 * embedded stack runs it at start and after each batch, and `paperclip audit digest` on demand. It is the only
 * function that may sign with the digest key (docs/evidence.md, "Daily digests").
 */
export const DIGEST_FUNCTION = sized({ name: 'write-digests', browser: false });

/**
 * The schedule's entry point (not a workflow step): each tenant's EventBridge schedule invokes it, and it starts
 * the batch with the schedule as its attested requester. Its role is the only one that may start the batch
 * workflow; the scheduler's role may only invoke it (src/app/scheduled-batch.ts, docs/deploy.md "Schedules").
 */
export const SCHEDULED_BATCH_FUNCTION = sized({ name: 'start-scheduled-batch', browser: false });

/** The alias of the digest signing key: created by the CDK app on AWS, by the local stack's KMS locally. */
export function digestKeyAlias(prefix: string): string {
  return `alias/${prefix}-digests`;
}

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
