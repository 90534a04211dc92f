import type { WorkflowFunctionName } from '../../src/contracts/functions.js';
import type { LocalHandlers } from '../aws/stepfunctions/index.js';
import { localFunctionHandlers } from '../aws/stack.js';
import { handler as readList } from '../../lambdas/read-list.js';
import { handler as validateRoute } from '../../lambdas/validate-route.js';
import { handler as claim } from '../../lambdas/claim.js';
import { handler as requestApproval } from '../../lambdas/request-approval.js';
import { handler as snapshot } from '../../lambdas/snapshot.js';
import { handler as browserWrite } from '../../lambdas/browser-write.js';
import { handler as readback } from '../../lambdas/readback.js';
import { handler as compensate } from '../../lambdas/compensate.js';
import { handler as complete } from '../../lambdas/complete.js';
import { handler as takeover } from '../../lambdas/takeover.js';
import { handler as summarizeBatch } from '../../lambdas/summarize-batch.js';

/** The deployed Lambda handlers, run in-process by the local Step Functions endpoint. */
const BY_NAME: Record<WorkflowFunctionName, (event: unknown) => Promise<unknown>> = {
  'read-list': readList,
  'validate-route': validateRoute,
  claim,
  'request-approval': requestApproval,
  snapshot,
  'browser-write': browserWrite,
  readback,
  compensate,
  complete,
  takeover,
  'summarize-batch': summarizeBatch,
};

/**
 * The handlers by physical name, each invocation run by `invoke` with its function's name: the embedded stack
 * runs it as that function's deployed role (twin/aws/iam), so every AWS call it makes is evaluated against
 * that role's policy. Overrides run as the function they replace.
 */
export function workflowHandlers(
  prefix: string,
  invoke: <T>(fn: WorkflowFunctionName, body: () => Promise<T>) => Promise<T>,
  overrides: Partial<Record<WorkflowFunctionName, (event: unknown) => Promise<unknown>>> = {},
): LocalHandlers {
  const all: Record<string, (event: unknown) => Promise<unknown>> = { ...BY_NAME, ...overrides };
  const invoked = Object.fromEntries(
    Object.entries(all).map(([name, handler]) => [name, (event: unknown) => invoke(name as WorkflowFunctionName, () => handler(event))]),
  ) as Record<WorkflowFunctionName, (event: unknown) => Promise<unknown>>;
  return localFunctionHandlers(prefix, invoked);
}
