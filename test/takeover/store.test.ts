import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamoDb, createTables, type LocalDynamoDb } from '../../twin/aws/dynamodb.js';
import { awsClientConfig } from '../../twin/aws/aws-config.js';
import { TakeoverStore } from '../../src/adapters/dynamodb/takeover-store.js';
import type { NewTakeoverEntry } from '../../src/app/ports/takeovers.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

/** The queue's conditional writes against dynalite: the rules two operators and a re-entering Lambda rely on. */
describe('takeover queue store', () => {
  let dynamo: LocalDynamoDb;
  let client: DynamoDBClient;
  let store: TakeoverStore;
  before(async () => {
    dynamo = await startLocalDynamoDb();
    client = new DynamoDBClient(awsClientConfig(dynamo.endpoint));
    await createTables(client, 'qt');
    store = new TakeoverStore(DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }), 'qt-takeover');
  });
  after(async () => {
    client?.destroy();
    await dynamo?.stop();
  });

  const entry = (key: string, executionArn: string, tenant = 'acme'): NewTakeoverEntry => ({
    key,
    taskId: 'T-q',
    tenant,
    billNo: 'ACME-202611-0001',
    action: 'mark_processed',
    identity: 'svc-recon-acme',
    reason: `false success seen by ${executionArn}`,
    errorName: null,
    tier: 'browser',
    stage: 'readback',
    degraded: false,
    evidence: ['evidence/acme/T-q/k/after.png'],
    evidenceBucket: 'b',
    executionArn,
    claimVersion: 1,
  });
  const resolution = (operator: string) => ({ as: 'done' as const, operator, note: 'checked by hand', at: new Date().toISOString() });

  test('opening twice from the same execution changes nothing (a retried Lambda)', async () => {
    const first = await store.open(entry('k-1', 'arn:e1'));
    const again = await store.open(entry('k-1', 'arn:e1'));
    assert.equal(first.change, 'opened');
    assert.equal(again.change, 'unchanged');
    assert.equal(again.entry.round, 1);
    assert.deepEqual(
      (await store.list('OPEN')).map((e) => e.key),
      ['k-1'],
    );
  });

  test('only one of two concurrent resolutions wins', async () => {
    await store.open(entry('k-2', 'arn:e1'));
    const [a, b] = await Promise.all([
      store.resolve('k-2', 1, resolution('a@ops.example')),
      store.resolve('k-2', 1, resolution('b@ops.example')),
    ]);
    assert.equal([a, b].filter(Boolean).length, 1);
    const stored = await store.get('k-2');
    assert.equal(stored?.status, 'RESOLVED');
    assert.equal(stored?.resolution?.operator, (a ?? b)?.resolution?.operator);
  });

  test('a later run reopens a resolved entry as round 2 and keeps round 1 in the history', async () => {
    await store.open(entry('k-3', 'arn:e1'));
    await store.resolve('k-3', 1, { ...resolution('a@ops.example'), as: 'retry', retryExecutionArn: 'arn:e2' });
    await store.recordRetryOutcome('k-3', 1, 'takeover', 'still pending');
    const reopened = await store.open(entry('k-3', 'arn:e2'));
    assert.equal(reopened.change, 'reopened');
    assert.equal(reopened.entry.status, 'OPEN');
    assert.equal(reopened.entry.round, 2);
    assert.equal(reopened.entry.resolution, undefined);
    assert.equal(reopened.entry.history.length, 1);
    assert.equal(reopened.entry.history[0]?.resolution?.retryOutcome, 'takeover');
    assert.equal(reopened.entry.history[0]?.executionArn, 'arn:e1');
    assert.equal(await store.resolve('k-3', 1, resolution('late@ops.example')), undefined, 'an answer to round 1 does not resolve round 2');
  });

  test('list filters by status and tenant, oldest first', async () => {
    await store.open(entry('k-4', 'arn:e1', 'globex'));
    const open = await store.list('OPEN');
    assert.deepEqual(
      open.map((e) => e.key),
      ['k-1', 'k-3', 'k-4'],
    );
    assert.deepEqual(
      (await store.list('OPEN', 'globex')).map((e) => e.key),
      ['k-4'],
    );
    assert.deepEqual(
      (await store.list('RESOLVED')).map((e) => e.key),
      ['k-2'],
    );
  });
});
