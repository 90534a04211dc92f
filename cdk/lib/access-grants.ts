import { Stack, ArnFormat } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { EvidenceBucket } from './evidence-bucket.js';
import type { WorkingBucket } from './working-bucket.js';
import type { FunctionAccess, TableId } from './function-access.js';
import type { TenantAccess } from './tenant-access.js';

/** The resources FUNCTION_ACCESS refers to. */
export interface AccessResources {
  tables: Readonly<Record<TableId, ITable>>;
  evidence: EvidenceBucket;
  /** The batches' working files, apart from the locked evidence. */
  working: WorkingBucket;
  identitySecrets: readonly ISecret[];
  approvalSigningKey: ISecret;
  requesterAttestationKey: ISecret;
  senderAddress: string;
  guardedWrite: GuardedWriteArns;
  tenantAccess: TenantAccess;
}

export interface GuardedWriteArns {
  stateMachine: string;
  /** Every execution of it: DescribeExecution/StopExecution are authorised on execution ARNs. */
  executions: string;
}

/**
 * The guarded-write workflow's ARNs built from its physical name, not from
 * the resource: the workflow's definition references the functions, so a
 * function referencing the workflow back would be a dependency cycle.
 */
export function guardedWriteArns(scope: Construct, stateMachineName: string): GuardedWriteArns {
  const stack = Stack.of(scope);
  return {
    stateMachine: stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    }),
    executions: stack.formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    }),
  };
}

/** Turns one row of FUNCTION_ACCESS into IAM statements on the function's role. */
export function grantAccess(scope: Construct, grantee: IRole, access: FunctionAccess, resources: AccessResources): void {
  const principal = grantee.grantPrincipal;
  const stack = Stack.of(scope);

  for (const [id, tableAccess] of Object.entries(access.tables) as Array<[TableId, FunctionAccess['tables'][TableId]]>) {
    if (!tableAccess) continue;
    const table = resources.tables[id];
    // An index-only grant (queriesIndexes) has no action on the table itself.
    if (tableAccess.actions.length > 0)
      principal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: [...tableAccess.actions],
          resources: [table.tableArn, ...(tableAccess.indexes ?? []).map((index) => `${table.tableArn}/index/${index}`)],
        }),
      );
    if (tableAccess.queriesIndexes && tableAccess.queriesIndexes.length > 0) {
      principal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: tableAccess.queriesIndexes.map((index) => `${table.tableArn}/index/${index}`),
        }),
      );
    }
  }

  if (access.actsForTenant) resources.tenantAccess.grantAssume(grantee);
  if (access.writesEvidence) resources.evidence.grantWriteEvidence(grantee);
  if (access.readsEvidence === 'before-screenshots') resources.evidence.grantReadBeforeScreenshots(grantee);
  if (access.readsEvidence === 'folders') {
    resources.evidence.grantReadEvidenceFolders(grantee);
    // The functions that seal (complete, takeover, summarize-batch) anchor each seal outside the table.
    resources.evidence.grantWriteAnchors(grantee);
  }
  if (access.writesDigests) resources.evidence.grantWriteDigests(grantee);
  if (access.batchRunFiles === 'writes-items') resources.working.grantWriteBatchItems(grantee);
  if (access.batchRunFiles === 'reads-results') resources.working.grantReadMapRunResults(grantee);

  if (access.readsIdentitySecrets && resources.identitySecrets.length > 0) {
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: resources.identitySecrets.map((secret) => secret.secretArn),
      }),
    );
  }
  if (access.readsApprovalSigningKey) {
    principal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [resources.approvalSigningKey.secretArn] }),
    );
  }

  if (access.readsRequesterKey) {
    principal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [resources.requesterAttestationKey.secretArn] }),
    );
  }

  if (access.sendsEmail) {
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        // In the SES sandbox the recipients are identities too and are authorised
        // like the sender, so the resource is every identity; the condition pins From.
        resources: [stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' })],
        conditions: { StringEquals: { 'ses:FromAddress': resources.senderAddress } },
      }),
    );
  }

  if (access.answersTaskTokens) {
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
        resources: [resources.guardedWrite.stateMachine],
      }),
    );
  }
}
