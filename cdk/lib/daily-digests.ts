import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { digestKeyAlias } from '../../src/contracts/functions.js';
import type { PaperclipFunction } from './paperclip-function.js';

/** The one algorithm digests are signed with (src/adapters/kms/digest-keys.ts). */
export const DIGEST_SIGNING_ALGORITHM = 'ECDSA_SHA_256';

/**
 * Key administration for the account, without the right to use the key: whoever holds it can change the
 * key policy (KMS refuses a policy that locks its creator out), which CloudTrail records, but cannot sign.
 */
const KEY_ADMIN_ACTIONS = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/**
 * The daily digests (docs/evidence.md, "Daily digests"): the asymmetric key they are signed with, and the
 * EventBridge rule that runs the digest function every hour, so every day gets its digest even when nothing
 * happened. The key policy is the boundary: kms:Sign for the digest function's role alone, the public half
 * for the auditor; not even the account's administrators may sign without first changing the policy.
 */
export class DailyDigests extends Construct {
  readonly key: Key;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: { prefix: string; writer: PaperclipFunction; auditor: IRole }) {
    super(scope, id);
    this.key = new Key(this, 'SigningKey', {
      alias: digestKeyAlias(props.prefix),
      description: 'Signs the Paperclip daily digests of the seal anchors (ECDSA P-256); only the write-digests function may sign',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // Verifying a digest needs the public key for as long as the evidence is kept: keep it with the data.
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersTheKeyButDoesNotSign',
            principals: [new AccountRootPrincipal()],
            actions: KEY_ADMIN_ACTIONS,
            resources: ['*'],
          }),
          new PolicyStatement({
            sid: 'OnlyTheDigestFunctionSigns',
            principals: [props.writer.role],
            actions: ['kms:Sign'],
            resources: ['*'],
            conditions: { StringEquals: { 'kms:SigningAlgorithm': DIGEST_SIGNING_ALGORITHM, 'kms:MessageType': 'RAW' } },
          }),
          new PolicyStatement({
            sid: 'AuditorReadsThePublicKey',
            principals: [props.auditor],
            actions: ['kms:GetPublicKey', 'kms:DescribeKey', 'kms:Verify'],
            resources: ['*'],
          }),
        ],
      }),
    });
    // The same grants in the roles' own policies, so each role's policy says everything it may do.
    props.writer.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'SignDigests',
        actions: ['kms:Sign'],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { 'kms:SigningAlgorithm': DIGEST_SIGNING_ALGORITHM, 'kms:MessageType': 'RAW' } },
      }),
    );
    props.auditor.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadDigestPublicKey',
        actions: ['kms:GetPublicKey', 'kms:DescribeKey', 'kms:Verify'],
        resources: [this.key.keyArn],
      }),
    );
    props.writer.fn.addEnvironment('PAPERCLIP_DIGEST_KEY_ID', this.key.keyArn);

    this.rule = new Rule(this, 'Hourly', {
      ruleName: `${props.prefix}-write-digests`,
      description: 'Runs the Paperclip digest function: a signed digest for every tenant and finished day, quiet days included',
      // Hourly: a day is digested an hour after it ends, and a failed run is retried by the next one.
      schedule: Schedule.rate(Duration.hours(1)),
      targets: [new LambdaFunction(props.writer.fn, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });
  }
}
