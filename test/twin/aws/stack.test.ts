import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { DescribeTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, GetObjectLockConfigurationCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { TABLES, tableName } from '../../../src/contracts/table-definitions.js';
import { EvidenceStore } from '../../../src/adapters/s3/evidence-store.js';
import { startLocalStack, type LocalStack } from '../../../twin/aws/stack.js';
import { awsError, closedExecution, deferred, fixture, fnArn, smArn, temporaryFolder } from './helpers.js';

const data = temporaryFolder('stack');
const tokens: string[] = [];
let tokenIssued = deferred<string>();
const handlers = {
  'test-classify': (event: { amount: number }) => ({ kind: event.amount >= 100 ? 'big' : 'small' }),
  'test-finish': (event: unknown) => ({ finished: event }),
  'test-request-approval': (event: { taskToken: string }) => {
    tokens.push(event.taskToken);
    tokenIssued.resolve(event.taskToken);
    return {};
  },
};
const substitutions = {
  ClassifyFunctionArn: fnArn('test-classify'),
  FinishFunctionArn: fnArn('test-finish'),
  RequestApprovalFunctionArn: fnArn('test-request-approval'),
  ApprovalTimeoutSeconds: '3600',
};
const stateMachines = [
  { name: 'task-choice-task', definition: fixture('task-choice-task.asl.json', substitutions) },
  { name: 'approval', definition: fixture('approval.asl.json', substitutions) },
];

function clients(stack: LocalStack) {
  return {
    ddb: new DynamoDBClient(stack.clientConfig('dynamodb')),
    s3: new S3Client(stack.clientConfig('s3')),
    sfn: new SFNClient(stack.clientConfig('stepfunctions')),
    ses: new SESv2Client(stack.clientConfig('ses')),
  };
}

let first: LocalStack;
let c: ReturnType<typeof clients>;

before(async () => {
  first = await startLocalStack({ dataDir: data.path, prefix: 'pc', handlers, stateMachines });
  c = clients(first);
});

after(async () => {
  await first.stop();
  data.remove();
});

test('starts every service on 127.0.0.1 and reports how long it took', (t) => {
  for (const url of Object.values(first.endpoints)) assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/?(\?token=[\w-]+)?$/);
  assert.match(first.endpoints.sesInbox, /\?token=[\w-]{32}/, 'the inbox URL carries its token');
  assert.equal(first.region, 'us-east-1');
  assert.deepEqual(Object.keys(first.stateMachineArns).sort(), ['approval', 'task-choice-task']);
  t.diagnostic(`startup ${first.startupMs} ms (cold: module loading and first ASL validation included)`);
});

test('DynamoDB: every table exists with its GSIs, on demand', async () => {
  assert.deepEqual(first.tables.created.sort(), TABLES.map((t) => tableName('pc', t.id)).sort());
  for (const table of TABLES) {
    const { Table } = await c.ddb.send(new DescribeTableCommand({ TableName: tableName('pc', table.id) }));
    assert.equal(Table?.TableStatus, 'ACTIVE');
    assert.equal(Table?.BillingModeSummary?.BillingMode, 'PAY_PER_REQUEST');
    assert.deepEqual((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort(), table.indexes.map((i) => i.name).sort());
  }
});

test('DynamoDB: a conditional put wins once, the second gets ConditionalCheckFailedException', async () => {
  const put = () =>
    c.ddb.send(
      new PutItemCommand({
        TableName: 'pc-claims',
        Item: { key: { S: 'k-1' }, taskId: { S: 'T-1' }, status: { S: 'CLAIMED' } },
        ConditionExpression: 'attribute_not_exists(#k)',
        ExpressionAttributeNames: { '#k': 'key' },
      }),
    );
  await put();
  const err = await awsError(put());
  assert.equal(err.name, 'ConditionalCheckFailedException');
  const byTask = await c.ddb.send(
    new QueryCommand({
      TableName: 'pc-claims',
      IndexName: 'byTask',
      KeyConditionExpression: 'taskId = :t',
      ExpressionAttributeValues: { ':t': { S: 'T-1' } },
    }),
  );
  assert.deepEqual(
    byTask.Items?.map((i) => i.key?.S),
    ['k-1'],
  );
});

test('S3: put, get and list in the evidence bucket (Object Lock: a PUT carries a checksum)', async () => {
  const body = Buffer.from('截图之前');
  const checksum = createHash('sha256').update(body).digest('base64');
  await c.s3.send(
    new PutObjectCommand({
      Bucket: first.bucket,
      Key: 'T-1/k-1/before.txt',
      Body: body,
      ContentType: 'text/plain',
      ChecksumSHA256: checksum,
    }),
  );
  const got = await c.s3.send(new GetObjectCommand({ Bucket: first.bucket, Key: 'T-1/k-1/before.txt' }));
  assert.equal(await got.Body?.transformToString(), '截图之前');
  const listed = await c.s3.send(new ListObjectsV2Command({ Bucket: first.bucket, Prefix: 'T-1/' }));
  assert.deepEqual(
    listed.Contents?.map((o) => o.Key),
    ['T-1/k-1/before.txt'],
  );
});

test('S3: a listing past 1,000 keys pages with continuation tokens (s3rver on OpenSSL 3)', async () => {
  // The working bucket: unversioned, so the listing is s3rver's own.
  const keys = Array.from({ length: 1005 }, (_, i) => `evidence/acme/T-many/k-${String(i).padStart(4, '0')}.json`);
  for (let i = 0; i < keys.length; i += 25) {
    await Promise.all(
      keys.slice(i, i + 25).map((Key) => c.s3.send(new PutObjectCommand({ Bucket: first.workingBucket, Key, Body: '{}' }))),
    );
  }
  const firstPage = await c.s3.send(new ListObjectsV2Command({ Bucket: first.workingBucket, Prefix: 'evidence/acme/T-many/' }));
  assert.equal(firstPage.Contents?.length, 1000);
  assert.ok(firstPage.IsTruncated && firstPage.NextContinuationToken);
  assert.deepEqual(await new EvidenceStore(c.s3, first.workingBucket).list('evidence/acme/T-many/'), keys);
});

test('SES: an email sent with the v2 API shows up in the inbox', async () => {
  const since = Math.floor(Date.now() / 1000) - 1;
  await c.ses.send(
    new SendEmailCommand({
      FromEmailAddress: 'paperclip@example.com',
      Destination: { ToAddresses: ['approver@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: '审批请求 refund B-1001' },
          Body: { Text: { Data: 'Approve: http://127.0.0.1/approve?t=abc' }, Html: { Data: '<a href="x">批准</a>' } },
        },
      },
    }),
  );
  const emails = await first.fetchEmails(since);
  const mail = emails.find((e) => e.subject === '审批请求 refund B-1001');
  assert.ok(mail, 'email is in the inbox');
  assert.deepEqual(mail.destination.to, ['approver@example.com']);
  assert.match(mail.body.text ?? '', /approve\?t=abc/);
  const inbox = await fetch(first.endpoints.sesInbox);
  assert.equal(inbox.status, 200);
  assert.match(inbox.headers.get('content-type') ?? '', /html/);
});

test('restart on the same data folder and ports keeps data; a RUNNING execution becomes Local.RunnerRestarted', async () => {
  const done = await c.sfn.send(
    new StartExecutionCommand({ stateMachineArn: smArn('task-choice-task'), name: 'before-restart', input: '{"amount":7}' }),
  );
  const finished = await closedExecution(c.sfn, done.executionArn!);
  assert.equal(finished.status, 'SUCCEEDED');
  tokenIssued = deferred();
  const waiting = await c.sfn.send(
    new StartExecutionCommand({ stateMachineArn: smArn('approval'), name: 'waiting', input: '{"key":"k-9"}' }),
  );
  const staleToken = await tokenIssued.promise;

  const ports = {
    dynamodb: Number(new URL(first.endpoints.dynamodb).port),
    s3: Number(new URL(first.endpoints.s3).port),
    ses: Number(new URL(first.endpoints.ses).port),
    stepfunctions: Number(new URL(first.endpoints.stepfunctions).port),
  };
  for (const client of Object.values(c)) client.destroy();
  await first.stop();

  first = await startLocalStack({ dataDir: data.path, prefix: 'pc', handlers, stateMachines, ports });
  c = clients(first);
  assert.deepEqual(first.tables.created, []);

  const item = await c.ddb.send(new GetItemCommand({ TableName: 'pc-claims', Key: { key: { S: 'k-1' } } }));
  assert.equal(item.Item?.status?.S, 'CLAIMED');
  const got = await c.s3.send(new GetObjectCommand({ Bucket: first.bucket, Key: 'T-1/k-1/before.txt' }));
  assert.equal(await got.Body?.transformToString(), '截图之前');

  const machines = await c.sfn.send(new ListStateMachinesCommand({}));
  assert.deepEqual(machines.stateMachines?.map((m) => m.name).sort(), ['approval', 'task-choice-task']);
  const again = await c.sfn.send(new DescribeExecutionCommand({ executionArn: done.executionArn }));
  assert.equal(again.status, 'SUCCEEDED');
  assert.equal(again.output, finished.output);

  const restarted = await c.sfn.send(new DescribeExecutionCommand({ executionArn: waiting.executionArn }));
  assert.equal(restarted.status, 'FAILED');
  assert.equal(restarted.error, 'Local.RunnerRestarted');
  const history = await c.sfn.send(new GetExecutionHistoryCommand({ executionArn: waiting.executionArn }));
  const types = history.events!.map((e) => e.type);
  assert.equal(types[0], 'ExecutionStarted');
  assert.ok(types.includes('TaskSubmitted'));
  assert.equal(types.at(-1), 'ExecutionFailed');
  const listed = await c.sfn.send(new ListExecutionsCommand({ stateMachineArn: smArn('approval'), statusFilter: 'FAILED' }));
  assert.deepEqual(
    listed.executions?.map((e) => e.name),
    ['waiting'],
  );
  const late = await awsError(c.sfn.send(new SendTaskSuccessCommand({ taskToken: staleToken, output: '{}' })));
  assert.equal(late.name, 'TaskTimedOut');

  // The restarted stack runs new executions as before.
  const next = await c.sfn.send(new StartExecutionCommand({ stateMachineArn: smArn('task-choice-task'), input: '{"amount":700}' }));
  assert.equal((await closedExecution(c.sfn, next.executionArn!)).status, 'SUCCEEDED');
  for (const client of Object.values(c)) client.destroy();
});

test('external emulators: tables and bucket created on them, mail read from their inbox, left running on stop', async () => {
  const external = {
    dynamodb: first.endpoints.dynamodb,
    s3: first.endpoints.s3,
    ses: first.endpoints.ses,
    sesInbox: first.endpoints.sesInbox,
  };
  const second = await startLocalStack({ prefix: 'ext', handlers, external });
  let stopped = false;
  try {
    assert.equal(second.endpoints.dynamodb, first.endpoints.dynamodb);
    assert.equal(second.endpoints.s3, first.endpoints.s3);
    assert.equal(second.endpoints.sesInbox, first.endpoints.sesInbox);
    assert.notEqual(second.endpoints.stepfunctions, first.endpoints.stepfunctions);
    assert.deepEqual(second.tables.created.sort(), TABLES.map((t) => tableName('ext', t.id)).sort());

    const s3 = new S3Client(second.clientConfig('s3'));
    const ses = new SESv2Client(second.clientConfig('ses'));
    try {
      await s3.send(new PutObjectCommand({ Bucket: 'ext-evidence-runs', Key: 'k.txt', Body: 'x' }));
      // The evidence bucket on the external S3 is Object Locked like one started here.
      const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'ext-evidence' }));
      assert.deepEqual(lock.ObjectLockConfiguration?.Rule?.DefaultRetention, { Mode: 'COMPLIANCE', Days: 365 });
      const refused = await awsError(s3.send(new PutObjectCommand({ Bucket: 'ext-evidence', Key: 'k.txt', Body: 'x' })));
      assert.equal(refused.name, 'InvalidRequest');
      const since = Math.floor(Date.now() / 1000) - 1;
      await ses.send(
        new SendEmailCommand({
          FromEmailAddress: 'paperclip@example.com',
          Destination: { ToAddresses: ['approver@example.com'] },
          Content: { Simple: { Subject: { Data: 'external inbox' }, Body: { Text: { Data: 'hi' } } } },
        }),
      );
      assert.ok((await second.fetchEmails(since)).some((e) => e.subject === 'external inbox'));
    } finally {
      s3.destroy();
      ses.destroy();
    }
    await second.stop();
    stopped = true;

    // The emulators belong to the first stack: still answering after the second stopped.
    const ddb = new DynamoDBClient(first.clientConfig('dynamodb'));
    try {
      const { Table } = await ddb.send(new DescribeTableCommand({ TableName: tableName('ext', TABLES[0]!.id) }));
      assert.equal(Table?.TableStatus, 'ACTIVE');
    } finally {
      ddb.destroy();
    }
    assert.ok(Array.isArray(await first.fetchEmails()));

    // A second start on the same emulators finds its tables and bucket already there.
    const third = await startLocalStack({ prefix: 'ext', handlers, external });
    assert.deepEqual(third.tables.created, []);
    await third.stop();
  } finally {
    if (!stopped) await second.stop();
  }
});

test('external emulators: a malformed endpoint is refused with the field and the form it needs', async () => {
  await assert.rejects(
    startLocalStack({ handlers, external: { dynamodb: 'localhost:8000' } }),
    /external\.dynamodb must be an http\(s\) origin/,
  );
  await assert.rejects(
    startLocalStack({ handlers, external: { sesInbox: 'http://127.0.0.1:9/' } }),
    /external\.sesInbox needs external\.ses/,
  );
});
