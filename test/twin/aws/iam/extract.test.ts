import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { synthesizedIam } from '../../../../scripts/extract-iam.js';
import { iamCatalog, readDeployedIam } from '../../../../twin/aws/iam/policies.js';
import { statementsOf } from '../../../../twin/aws/iam/policy.js';
import { extractIam, UnresolvableError } from '../../../../twin/aws/iam/template.js';
import { WORKFLOW_FUNCTIONS } from '../../../../src/contracts/functions.js';

/**
 * The committed extract of the deployed IAM (twin/aws/iam/deployed-iam.json) is what the CDK app
 * synthesizes today: a change to cdk/ that touches IAM fails here until `npx tsx scripts/extract-iam.ts`
 * is run, so the local stack never enforces policies the deployment no longer has.
 */

describe('the deployed IAM the local stack enforces', () => {
  it('equals a fresh synth of the CDK app', async () => {
    const fresh = await synthesizedIam();
    assert.deepEqual(readDeployedIam(), JSON.parse(JSON.stringify(fresh)), 'regenerate it: npx tsx scripts/extract-iam.ts');
  });

  it('names a role for every workflow function and the approval endpoint, and the bucket policy with its trace Deny', () => {
    const catalog = iamCatalog({ prefix: 'p', bucket: 'b', sender: 's@example.com', region: 'eu-west-1', account: '000000000000' });
    for (const fn of [...WORKFLOW_FUNCTIONS.map((f) => f.name), 'approval-http']) {
      assert.match(catalog.functionRole(fn).arn, /^arn:aws:iam::000000000000:role\/p-/);
    }
    const deny = statementsOf(catalog.bucketPolicy('b')!.document).find((s) => s.Sid === 'OnlyTheAuditorReadsTraces');
    assert.equal(deny?.Effect, 'Deny');
    assert.equal(deny?.Resource, 'arn:aws:s3:::b/*trace.zip');
    assert.deepEqual(deny?.Condition, { ArnNotEquals: { 'aws:PrincipalArn': 'arn:aws:iam::000000000000:role/p-evidence-auditor' } });
    assert.ok(JSON.stringify(catalog.tenantRole.policies).includes('arn:aws:dynamodb:eu-west-1:000000000000:table/p-claims'));
    assert.ok(!JSON.stringify([...catalog.roles.values()]).includes('{{'), 'every placeholder is filled in');
  });

  it('refuses an intrinsic it cannot resolve rather than guessing', () => {
    const template = {
      Resources: {
        TenantAccessRoleD50CA26B: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Statement: [] } } },
        Thing: {
          Type: 'AWS::IAM::Policy',
          Properties: { Roles: [{ Ref: 'TenantAccessRoleD50CA26B' }], PolicyDocument: { 'Fn::Sub': 'x' } },
        },
      },
    };
    assert.throws(() => extractIam(template, { prefix: 'p', bucketName: 'b', senderAddress: 's' }), UnresolvableError);
  });
});
