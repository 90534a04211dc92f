import { existsSync } from 'node:fs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  APPROVAL_HTTP_FUNCTION,
  DIGEST_FUNCTION,
  SCHEDULED_BATCH_FUNCTION,
  WORKFLOW_FUNCTIONS,
  type WorkflowFunctionId,
} from '../../src/workflow/functions.js';
import { grantAccess, type AccessResources } from './access-grants.js';
import { FUNCTION_ACCESS, type FunctionName } from './function-access.js';
import { PaperclipFunction } from './paperclip-function.js';

export interface HandlersProps {
  prefix: string;
  logRetention: RetentionDays;
  /** lambdas/<name>.ts by default. */
  entryFor: (name: FunctionName) => string;
  runtimeFilesDir: string;
  /** The repository root, with node_modules installed. */
  projectRoot: string;
  access: AccessResources;
}

/** The handler behind the approval page: GET shows the request, POST records the decision. */
export const APPROVAL_HTTP = APPROVAL_HTTP_FUNCTION;

/**
 * Every Lambda: the workflow steps from the shared list plus the approval
 * endpoint, the digest writer and the schedules' entry point, each with the access FUNCTION_ACCESS gives it and nothing more.
 */
export class Handlers extends Construct {
  readonly workflow: Readonly<Record<WorkflowFunctionId, PaperclipFunction>>;
  readonly approvalHttp: PaperclipFunction;
  /** The daily digest writer, invoked by its own EventBridge rule (daily-digests.ts). */
  readonly writeDigests: PaperclipFunction;
  /** The schedules' entry point, invoked by EventBridge Scheduler (schedules.ts). */
  readonly startScheduledBatch: PaperclipFunction;
  readonly all: readonly PaperclipFunction[];

  constructor(scope: Construct, id: string, props: HandlersProps) {
    super(scope, id);
    // Memory and timeout come from the measured sizing (src/workflow/sizing.ts), like the local runner's timeouts.
    const build = (constructId: string, name: FunctionName, browser: boolean, timeoutSeconds: number, memoryMb: number) => {
      const entry = props.entryFor(name);
      if (!existsSync(entry)) throw new Error(`handler ${name} has no entry file at ${entry}`);
      const fn = new PaperclipFunction(this, constructId, {
        prefix: props.prefix,
        name,
        browser,
        entry,
        memoryMb,
        timeoutSeconds,
        logRetention: props.logRetention,
        environment: {},
        runtimeFilesDir: props.runtimeFilesDir,
        projectRoot: props.projectRoot,
        tracing: name !== APPROVAL_HTTP.name,
      });
      grantAccess(this, fn.role, FUNCTION_ACCESS[name], props.access);
      return fn;
    };

    const workflow = {} as Record<WorkflowFunctionId, PaperclipFunction>;
    for (const spec of WORKFLOW_FUNCTIONS) workflow[spec.id] = build(spec.id, spec.name, spec.browser, spec.timeoutSeconds, spec.memoryMb);
    this.workflow = workflow;
    this.approvalHttp = build(
      'ApprovalHttp',
      APPROVAL_HTTP.name,
      APPROVAL_HTTP.browser,
      APPROVAL_HTTP.timeoutSeconds,
      APPROVAL_HTTP.memoryMb,
    );
    this.writeDigests = build(
      'WriteDigests',
      DIGEST_FUNCTION.name,
      DIGEST_FUNCTION.browser,
      DIGEST_FUNCTION.timeoutSeconds,
      DIGEST_FUNCTION.memoryMb,
    );
    this.startScheduledBatch = build(
      'StartScheduledBatch',
      SCHEDULED_BATCH_FUNCTION.name,
      SCHEDULED_BATCH_FUNCTION.browser,
      SCHEDULED_BATCH_FUNCTION.timeoutSeconds,
      SCHEDULED_BATCH_FUNCTION.memoryMb,
    );
    this.all = [...Object.values(workflow), this.approvalHttp, this.writeDigests, this.startScheduledBatch];

    // The tenant functions assume the tenant-access role; the session policy names the evidence key.
    for (const spec of WORKFLOW_FUNCTIONS) {
      if (!FUNCTION_ACCESS[spec.name].actsForTenant) continue;
      workflow[spec.id].fn.addEnvironment('PAPERCLIP_TENANT_ROLE_ARN', props.access.tenantAccess.role.roleArn);
      workflow[spec.id].fn.addEnvironment('PAPERCLIP_EVIDENCE_KEY_ARN', props.access.evidence.key.keyArn);
    }
  }
}
