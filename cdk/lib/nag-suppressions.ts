import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { FUNCTION_ACCESS } from './function-access.js';
import type { PaperclipStack } from './paperclip-stack.js';

/**
 * Every cdk-nag finding this system accepts, in one place, each with the
 * reason it holds for Paperclip. cdk-nag 3 matches acknowledgements per
 * finding: an IAM5 wildcard is acknowledged for the exact resource pattern
 * it reports, so a new wildcard elsewhere still fails the synth.
 */

function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** The `<LogicalId.Arn>` token spelling cdk-nag uses in IAM5 finding ids. */
function arnToken(scope: IConstruct): string {
  const resource = scope.node.defaultChild as CfnElement;
  return `<${Stack.of(scope).getLogicalId(resource)}.Arn>`;
}

export function applyNagSuppressions(stack: PaperclipStack): void {
  const bucketArn = arnToken(stack.evidence.bucket);
  const workingArn = arnToken(stack.working.bucket);
  const guardedWriteExecutions = (name: string) =>
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${name}:*]`;
  const guardedWriteName = stack.workflows.names.GuardedWrite;

  for (const handler of stack.handlers.all) {
    acknowledge(
      handler.fn,
      'AwsSolutions-L1',
      'Pinned to nodejs22.x on purpose: the @sparticuz/chromium build and its AL2023 libraries the browser functions ship are ' +
        'released and tested against that runtime, and every function shares one runtime so the local runs match Lambda. ' +
        'Move all functions together when a Chromium release supports the next runtime.',
    );
    if (handler.tracingEnabled) {
      acknowledge(
        handler.role,
        'AwsSolutions-IAM5[Resource::*]',
        'xray:PutTraceSegments and xray:PutTelemetryRecords (added by active tracing) have no resource-level permissions; nothing else in this role uses "*".',
      );
    }
    const access = FUNCTION_ACCESS[handler.name];
    if (access.writesEvidence) {
      acknowledge(
        handler.role,
        `AwsSolutions-IAM5[Resource::${bucketArn}/evidence/*]`,
        access.readsEvidence === 'folders'
          ? 'Evidence keys are evidence/<tenant>/<taskId>/<idempotencyKey>/<file>, created per item at run time, so the prefix is the ' +
              "narrowest fixed resource. This function writes an item's record and evidence page and hashes the folder into the batch " +
              'seal, so it reads what it lists there; traces stay denied by the bucket policy, and Object Lock keeps every version.'
          : 'Evidence keys are evidence/<tenant>/<taskId>/<idempotencyKey>/<file>, created per item at run time, so the prefix is the ' +
              'narrowest fixed resource. The grant is s3:PutObject only (no read, delete or retention change) and Object Lock keeps every version.',
      );
    }
    if (access.readsEvidence === 'folders') {
      acknowledge(
        handler.role,
        `AwsSolutions-IAM5[Resource::${bucketArn}/anchors/*]`,
        'Seal anchors are anchors/<tenant>/<day>/<chain>/<seq>.json, named by run-time values, so the prefix is the narrowest ' +
          'fixed resource. This function anchors the seals it makes: s3:PutObject only, no read, delete or retention change, and ' +
          'Object Lock keeps every version.',
      );
    }
    if (access.writesDigests) {
      for (const prefix of ['anchors', 'digests']) {
        acknowledge(
          handler.role,
          `AwsSolutions-IAM5[Resource::${bucketArn}/${prefix}/*]`,
          'Anchors are anchors/<tenant>/<day>/<chain>/<seq>.json and digests digests/<tenant>/<day>.json, named by run-time ' +
            "values, so the prefixes are the narrowest fixed resources. This function reads a day's anchors and the previous " +
            'digest and puts the next digest under digests/ only; no delete or retention change, and Object Lock keeps every version.',
        );
      }
    }
    if (access.sendsEmail) {
      acknowledge(
        handler.role,
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
        'While the account is in the SES sandbox, SES authorises each recipient identity like the sender, and the recipients ' +
          '(approvers, operators) are configured outside this stack. The statement is pinned to the configured sender by a ses:FromAddress condition.',
      );
    }
  }
  acknowledge(
    stack.handlers.approvalHttp.role,
    `AwsSolutions-IAM5[Resource::${bucketArn}/evidence/*/before.png]`,
    'The approval page shows the pre-state screenshot of the item being approved; its key contains the tenant, task and idempotency key ' +
      'only known at run time. Only before.png objects are readable, never traces or other evidence.',
  );
  const runsReason =
    "A batch's working files are runs/<tenant>/<taskId>/<execution>/…, named at run time, so the pattern is the narrowest fixed " +
    'resource; it matches only the item list or the map run results, in the working bucket (not evidence, not locked).';
  acknowledge(
    stack.tenantAccess.role,
    `AwsSolutions-IAM5[Resource::${bucketArn}/evidence/<aws:PrincipalTag/tenant>/*]`,
    "A tenant session's evidence: evidence/<its tenant>/<taskId>/<idempotencyKey>/<file>, named per item at run time; the " +
      'tenant comes from the session tag, so a session reaches only its own tenant. PutObject and GetObject only (traces stay ' +
      'denied by the bucket policy); Object Lock keeps every version.',
  );
  acknowledge(
    stack.tenantAccess.role,
    `AwsSolutions-IAM5[Resource::${workingArn}/runs/<aws:PrincipalTag/tenant>/*/items.json]`,
    `${runsReason} PutObject of its own tenant's item lists only (ReadList, under the tenant session).`,
  );
  acknowledge(
    stack.handlers.workflow.SummarizeBatch.role,
    `AwsSolutions-IAM5[Resource::${workingArn}/runs/*/results/*]`,
    `${runsReason} GetObject only.`,
  );
  acknowledge(
    stack.workflows.roles.Batch,
    `AwsSolutions-IAM5[Resource::${workingArn}/runs/*/items.json]`,
    `${runsReason} The Distributed Map's ItemReader reads the list.`,
  );
  acknowledge(
    stack.workflows.roles.Batch,
    `AwsSolutions-IAM5[Resource::${workingArn}/runs/*/results/*]`,
    `${runsReason} The Distributed Map's ResultWriter writes the results (multipart actions for large result files).`,
  );
  acknowledge(
    stack.workflows.roles.Batch,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${stack.workflows.names.Batch}/*]`,
    'A Distributed Map runs its items as child executions named <state machine>/<map run label>:<id> at run time; this is the ' +
      "documented least privilege for watching and stopping them, scoped to the batch workflow's own children.",
  );
  for (const role of [stack.workflows.roles.GuardedWrite, stack.workflows.roles.Batch]) {
    acknowledge(
      role,
      guardedWriteExecutions(guardedWriteName),
      'Guarded-write executions are named by idempotency keys computed at run time; DescribeExecution/StopExecution only accept ' +
        'execution ARNs, so the pattern is scoped to executions of the one guarded-write state machine.',
    );
  }
  for (const id of ['Batch', 'GuardedWrite'] as const) {
    acknowledge(
      stack.workflows.roles[id],
      'AwsSolutions-IAM5[Resource::*]',
      'Added by Step Functions logging and tracing: the CloudWatch Logs delivery actions (logs:CreateLogDelivery and friends) and ' +
        'the X-Ray actions do not support resource-level permissions. Function invocation is granted per function ARN.',
    );
  }

  acknowledge(
    stack.auditor.role,
    `AwsSolutions-IAM5[Resource::${bucketArn}/*]`,
    'The auditor role exists to read any evidence object (including traces, which the bucket policy denies to everyone else). ' +
      'It holds read-only actions; Object Lock prevents changes regardless.',
  );

  for (const secret of stack.secrets.identities.values()) {
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      "A service identity's vendor back-office password can only be changed in the vendor's own UI, which has no API a rotation " +
        'Lambda could call. Rotation is the manual procedure in docs/deploy.md (change at the vendor, then put-secret-value).',
    );
  }
  acknowledge(
    stack.secrets.approvalSigningKey,
    'AwsSolutions-SMG4',
    'Rotating the approval HMAC key invalidates every approval link already mailed (they then fail verification, and nothing is ' +
      'executed). It is rotated by hand between approval windows, as docs/deploy.md describes, not on a timer.',
  );

  acknowledge(
    stack.secrets.requesterAttestationKey,
    'AwsSolutions-SMG4',
    'Rotating the requester attestation key makes every execution started before the rotation and not yet routed fail routing ' +
      '(rejected, nothing written). It is rotated by hand when no batch runs, as docs/deploy.md describes, not on a timer.',
  );

  acknowledge(
    stack.schedules.role,
    `AwsSolutions-IAM5[Resource::${arnToken(stack.handlers.startScheduledBatch.fn)}:*]`,
    'The Scheduler Lambda target grants lambda:InvokeFunction on the entry point and its versions and aliases (`<arn>:*`): ' +
      'one function, the schedules entry point, and no other; it attests the schedule as requester and starts the batch.',
  );

  acknowledge(
    stack.schedules.deadLetters,
    'AwsSolutions-SQS3',
    'This queue is itself the dead-letter queue of the batch schedules (EventBridge Scheduler DeadLetterConfig, which cdk-nag does not ' +
      'recognise as a redrive source). An alarm fires on its first message.',
  );
}
