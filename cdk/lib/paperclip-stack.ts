import { join } from 'node:path';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { WORKFLOW_FUNCTIONS, type WorkflowFunctionId } from '../../src/workflow/functions.js';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { guardedWriteArns } from './access-grants.js';
import { ApprovalEndpoint } from './approval-endpoint.js';
import { ApproverSignIn } from './approver-sign-in.js';
import { AuditorRole } from './auditor-role.js';
import { assertLocalEsbuild } from './bundling.js';
import { SenderIdentity } from './email.js';
import { EvidenceBucket } from './evidence-bucket.js';
import { WorkingBucket } from './working-bucket.js';
import { workingBucketName } from '../../src/config/schema.js';
import type { FunctionName } from './function-access.js';
import { Handlers } from './handlers.js';
import { applyNagSuppressions } from './nag-suppressions.js';
import { Observability } from './observability.js';
import { writeRuntimeFiles, type ResolvedDeployment } from './runtime-config.js';
import { BatchSchedules } from './schedules.js';
import { DailyDigests } from './daily-digests.js';
import { PaperclipSecrets } from './secrets.js';
import { PaperclipTables } from './tables.js';
import { TenantAccess } from './tenant-access.js';
import { Workflows, stateMachineName } from './workflows.js';

export interface PaperclipStackProps extends StackProps {
  deployment: ResolvedDeployment;
  /** The repository root: lambdas/, statemachines/ and node_modules/ live here. */
  projectRoot: string;
  /** Handler entry files; lambdas/<name>.ts unless a test substitutes fixtures. */
  entryFor?: (name: FunctionName) => string;
  /** ASL files; statemachines/<file> unless a test substitutes fixtures. */
  definitionPath?: (file: string) => string;
}

/** Paperclip on AWS: one stack, assembled from constructs that each own one concern. */
export class PaperclipStack extends Stack {
  readonly tables: PaperclipTables;
  readonly auditor: AuditorRole;
  readonly evidence: EvidenceBucket;
  /** The batches' working files, unlocked. */
  readonly working: WorkingBucket;
  readonly secrets: PaperclipSecrets;
  readonly sender: SenderIdentity;
  readonly tenantAccess: TenantAccess;
  readonly handlers: Handlers;
  readonly workflows: Workflows;
  readonly approvalEndpoint: ApprovalEndpoint;
  /** Present when the runtime config asks for approver sign-in. */
  readonly approverSignIn?: ApproverSignIn;
  readonly schedules: BatchSchedules;
  readonly digests: DailyDigests;
  readonly observability: Observability;
  readonly deployment: ResolvedDeployment;

  constructor(scope: Construct, id: string, props: PaperclipStackProps) {
    super(scope, id, props);
    assertLocalEsbuild();
    this.deployment = props.deployment;
    const { deploy, packaged } = props.deployment;
    const prefix = deploy.prefix;
    const logRetention = deploy.logRetentionDays as RetentionDays;

    this.tables = new PaperclipTables(this, 'Tables', { prefix });
    this.auditor = new AuditorRole(this, 'Auditor', { prefix });
    this.auditor.grantReadRecords([this.tables.byId.audit, this.tables.byId.claims]);
    this.evidence = new EvidenceBucket(this, 'Evidence', {
      prefix,
      bucketName: deploy.evidence.bucketName,
      retentionDays: deploy.evidence.retentionDays,
      objectLockMode: deploy.evidence.objectLockMode,
      glacierAfterDays: deploy.evidence.glacierAfterDays,
      accessLogRetentionDays: deploy.evidence.accessLogRetentionDays,
      auditor: this.auditor.role,
    });
    this.working = new WorkingBucket(this, 'Working', {
      bucketName: workingBucketName({ bucket: deploy.evidence.bucketName, working_bucket: deploy.evidence.workingBucketName }),
      key: this.evidence.key,
      accessLogs: this.evidence.accessLogs,
      expireAfterDays: deploy.evidence.workingFilesExpireDays,
    });
    this.secrets = new PaperclipSecrets(this, 'Secrets', {
      prefix,
      identityIds: packaged.identities.map((identity) => identity.id),
    });
    this.sender = new SenderIdentity(this, 'Sender', {
      senderAddress: deploy.email.senderAddress,
      senderDomain: deploy.email.senderDomain,
    });

    this.tenantAccess = new TenantAccess(this, 'TenantAccess', {
      prefix,
      tables: this.tables.byId,
      evidence: this.evidence,
      working: this.working,
    });

    this.handlers = new Handlers(this, 'Handlers', {
      prefix,
      logRetention,
      entryFor: props.entryFor ?? ((name) => join(props.projectRoot, 'lambdas', `${name}.ts`)),
      runtimeFilesDir: writeRuntimeFiles(props.deployment),
      projectRoot: props.projectRoot,
      access: {
        tables: this.tables.byId,
        evidence: this.evidence,
        working: this.working,
        identitySecrets: [...this.secrets.identities.values()],
        approvalSigningKey: this.secrets.approvalSigningKey,
        requesterAttestationKey: this.secrets.requesterAttestationKey,
        senderAddress: deploy.email.senderAddress,
        guardedWrite: guardedWriteArns(this, stateMachineName(prefix, 'guarded-write')),
        tenantAccess: this.tenantAccess,
      },
    });

    const functions = {} as Record<WorkflowFunctionId, IFunction>;
    for (const spec of WORKFLOW_FUNCTIONS) functions[spec.id] = this.handlers.workflow[spec.id].fn;
    this.workflows = new Workflows(this, 'Workflows', {
      prefix,
      functions,
      definitionPath: props.definitionPath ?? ((file) => join(props.projectRoot, 'statemachines', file)),
      logRetention,
      writePolicy: packaged.write_policy,
      working: this.working,
    });

    this.approvalEndpoint = new ApprovalEndpoint(this, 'Approval', {
      handler: this.handlers.approvalHttp,
      requestApproval: this.handlers.workflow.RequestApproval,
      publicBaseUrl: deploy.approvalBaseUrl,
      reservedConcurrency: deploy.approvalReservedConcurrency,
    });

    if (packaged.approvals.sign_in && deploy.approvalBaseUrl) {
      this.approverSignIn = new ApproverSignIn(this, 'ApproverSignIn', {
        prefix,
        approvalBaseUrl: deploy.approvalBaseUrl,
        domainPrefix: deploy.signInDomainPrefix ?? `${prefix}-approvers`,
        approvalHttp: this.handlers.approvalHttp.fn,
        write: this.handlers.workflow.BrowserWrite.fn,
      });
    }

    this.schedules = new BatchSchedules(this, 'Schedules', {
      prefix,
      tenants: deploy.tenants,
      batch: this.workflows.byId.Batch,
      starter: this.handlers.startScheduledBatch,
    });

    this.digests = new DailyDigests(this, 'Digests', { prefix, writer: this.handlers.writeDigests, auditor: this.auditor.role });

    this.observability = new Observability(this, 'Observability', {
      prefix,
      alarmAddress: deploy.email.alarmAddress,
      takeoverRateThreshold: deploy.alarms.takeoverRateThreshold,
      workflows: [this.workflows.byId.Batch, this.workflows.byId.GuardedWrite],
      scheduleDeadLetters: this.schedules.deadLetters,
    });

    new CfnOutput(this, 'EvidenceBucket', { value: this.evidence.bucket.bucketName });
    new CfnOutput(this, 'AuditorRoleArn', { value: this.auditor.role.roleArn });
    new CfnOutput(this, 'BatchStateMachineArn', { value: this.workflows.byId.Batch.stateMachineArn });
    new CfnOutput(this, 'DigestKeyArn', { value: this.digests.key.keyArn });

    applyNagSuppressions(this);
  }
}
