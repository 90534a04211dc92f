import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { startLocalStack, type LocalStack } from '../../../twin/aws/stack.js';
import { closedExecution, fnArn, NamedError, ROLE } from './helpers.js';

// The limits Step Functions and Lambda enforce on AWS, enforced by the local runner so a
// definition that breaks them fails here first: payload size, unresolved paths, history
// length, function timeouts, and the Distributed Map's S3 reader and writer.

const KIB = 1024;
const text = (bytes: number) => 'x'.repeat(bytes);
const handlers = {
  'lim-big': (event: { bytes: number }) => ({ blob: text(event.bytes) }),
  'lim-echo': (event: unknown) => event,
  'lim-slow': () => sleep(2_500, { late: true }),
  'lim-item': (event: { n: number; fail?: boolean }) => {
    if (event.fail) throw new NamedError('ItemBroken', `item ${event.n} is broken`);
    return { n: event.n, doubled: event.n * 2 };
  },
};

let stack: LocalStack;
let sfn: SFNClient;
let s3: S3Client;

async function machine(name: string, definition: object): Promise<string> {
  const out = await sfn.send(new CreateStateMachineCommand({ name, definition: JSON.stringify(definition), roleArn: ROLE }));
  return out.stateMachineArn!;
}

async function run(stateMachineArn: string, input: unknown) {
  const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }));
  return closedExecution(sfn, executionArn!, 120_000);
}

const catchAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Caught' }];
const caught = { Caught: { Type: 'Pass', End: true } };

before(async () => {
  stack = await startLocalStack({ prefix: 'lim', handlers, functionTimeoutsSeconds: { 'lim-slow': 1 } });
  sfn = new SFNClient(stack.clientConfig('stepfunctions'));
  s3 = new S3Client(stack.clientConfig('s3'));
});

after(async () => {
  sfn.destroy();
  s3.destroy();
  await stack.stop();
});

describe('payload limit (262,144 bytes)', () => {
  test('a state output over the limit fails the execution with States.DataLimitExceeded, which no Catch catches', async () => {
    const arn = await machine('state-output', {
      StartAt: 'Big',
      States: {
        Big: { Type: 'Task', Resource: fnArn('lim-big'), ResultPath: '$.a', Next: 'Twice', Catch: catchAll },
        Twice: { Type: 'Pass', Parameters: { 'a.$': '$.a', 'b.$': '$.a' }, Next: 'Never' },
        Never: { Type: 'Pass', End: true },
        ...caught,
      },
    });
    const small = await run(arn, { bytes: 100 * KIB });
    assert.equal(small.status, 'SUCCEEDED', 'the same machine passes with 200 KiB in its largest state');
    const big = await run(arn, { bytes: 140 * KIB });
    assert.equal(big.status, 'FAILED');
    assert.equal(big.error, 'States.DataLimitExceeded');
    assert.match(big.cause ?? '', /output of state "Twice" is \d+ bytes, over the 262144-byte limit/);
    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: big.executionArn, maxResults: 1000 }));
    const entered = history.events!.filter((e) => e.type?.endsWith('StateEntered')).map((e) => e.stateEnteredEventDetails?.name);
    assert.ok(!entered.includes('Never') && !entered.includes('Caught'), `entered: ${entered.join(', ')}`);
  });

  test('task parameters over the limit fail before the function runs, past any Catch', async () => {
    let invoked = 0;
    handlers['lim-echo'] = (event: unknown) => {
      invoked += 1;
      return event;
    };
    const arn = await machine('task-parameters', {
      StartAt: 'Echo',
      States: {
        Echo: { Type: 'Task', Resource: fnArn('lim-echo'), Parameters: { 'a.$': '$.s', 'b.$': '$.s' }, End: true, Catch: catchAll },
        ...caught,
      },
    });
    const out = await run(arn, { s: text(130 * KIB) });
    assert.equal(out.status, 'FAILED');
    assert.equal(out.error, 'States.DataLimitExceeded');
    assert.match(out.cause ?? '', /parameters of state "Echo"/);
    assert.equal(invoked, 0);
  });
});

test('a path that does not resolve is States.Runtime: no Catch applies and the execution fails', async () => {
  const arn = await machine('missing-path', {
    StartAt: 'Echo',
    States: {
      Echo: {
        Type: 'Task',
        Resource: fnArn('lim-echo'),
        ResultSelector: { 'billNo.$': '$.billNo' },
        End: true,
        Catch: catchAll,
      },
      ...caught,
    },
  });
  const out = await run(arn, { outcome: 'rejected' });
  assert.equal(out.status, 'FAILED');
  assert.equal(out.error, 'States.Runtime');
  assert.match(out.cause ?? '', /\$\.billNo/);
});

test('an execution that reaches 25,000 history events fails', async () => {
  // Two states per turn, two events per state: 6,250 turns reach the quota.
  const arn = await machine('endless', {
    StartAt: 'Count',
    States: {
      Count: { Type: 'Pass', Parameters: { 'n.$': 'States.MathAdd($.n, 1)' }, Next: 'Again' },
      Again: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericLessThan: 100_000, Next: 'Count' }], Default: 'Stop' },
      Stop: { Type: 'Succeed' },
    },
  });
  const out = await run(arn, { n: 0 });
  assert.equal(out.status, 'FAILED');
  assert.match(out.cause ?? '', /25000 events/);
  let events = 0;
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn: out.executionArn, maxResults: 1000, nextToken }));
    events += page.events!.length;
    nextToken = page.nextToken;
  } while (nextToken);
  assert.equal(events, 25_001, '25,000 events, then ExecutionFailed');
});

test('a function that runs past its configured timeout fails the task the way Lambda does; Catch sees it', async () => {
  const arn = await machine('slow', {
    StartAt: 'Slow',
    States: { Slow: { Type: 'Task', Resource: fnArn('lim-slow'), End: true, Catch: catchAll }, ...caught },
  });
  const out = await run(arn, {});
  assert.equal(out.status, 'SUCCEEDED');
  const caughtError = (JSON.parse(out.output!) as { caught: { Error: string; Cause: string } }).caught;
  assert.equal(caughtError.Error, 'Sandbox.Timedout');
  assert.match(caughtError.Cause, /Task timed out after 1\.00 seconds/);
});

describe('Distributed Map', () => {
  const definition = (tolerated: number) => ({
    StartAt: 'Items',
    States: {
      Items: {
        Type: 'Map',
        ItemReader: {
          Resource: 'arn:aws:states:::s3:getObject',
          ReaderConfig: { InputType: 'JSON' },
          Parameters: { 'Bucket.$': '$.bucket', 'Key.$': '$.key' },
        },
        MaxConcurrencyPath: '$.concurrency',
        ToleratedFailurePercentage: tolerated,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: 'Work',
          States: { Work: { Type: 'Task', Resource: fnArn('lim-item'), End: true } },
        },
        ResultWriter: {
          Resource: 'arn:aws:states:::s3:putObject',
          Parameters: { 'Bucket.$': '$.bucket', Prefix: 'results' },
          WriterConfig: { OutputType: 'JSONL', Transformation: 'NONE' },
        },
        ResultPath: '$.results',
        Catch: catchAll,
        End: true,
      },
      ...caught,
    },
  });

  async function putItems(key: string, items: unknown[]): Promise<void> {
    await s3.send(new PutObjectCommand({ Bucket: stack.workingBucket, Key: key, Body: JSON.stringify(items) }));
  }
  async function getText(key: string): Promise<string> {
    return (await (await s3.send(new GetObjectCommand({ Bucket: stack.workingBucket, Key: key }))).Body?.transformToString()) ?? '';
  }

  test('reads items from S3, runs one child execution each, writes a manifest and results to S3; the parent history stays small', async () => {
    const arn = await machine('distributed', definition(0));
    const items = Array.from({ length: 300 }, (_, n) => ({ n }));
    await putItems('work/items.json', items);
    const out = await run(arn, { bucket: stack.workingBucket, key: 'work/items.json', concurrency: 16 });
    assert.equal(out.status, 'SUCCEEDED', out.cause);
    const { results } = JSON.parse(out.output!) as { results: { MapRunArn: string; ResultWriterDetails: { Bucket: string; Key: string } } };
    assert.match(results.MapRunArn, /^arn:aws:states:us-east-1:\d{12}:mapRun:distributed\/Items:[0-9a-f-]{36}$/);
    assert.equal(results.ResultWriterDetails.Bucket, stack.workingBucket);
    assert.match(results.ResultWriterDetails.Key, /^results\/[0-9a-f-]{36}\/manifest\.json$/);
    const manifest = JSON.parse(await getText(results.ResultWriterDetails.Key)) as {
      MapRunArn: string;
      ResultFiles: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', Array<{ Key: string; Size: number }>>;
    };
    assert.equal(manifest.MapRunArn, results.MapRunArn);
    assert.deepEqual([manifest.ResultFiles.FAILED.length, manifest.ResultFiles.PENDING.length], [0, 0]);
    const lines = (await getText(manifest.ResultFiles.SUCCEEDED[0]!.Key)).trim().split('\n');
    assert.equal(lines.length, 300);
    const outputs = lines.map((l) => JSON.parse(l) as { Status: string; Input: string; Output: string; ExecutionArn: string });
    assert.ok(outputs.every((r) => r.Status === 'SUCCEEDED'));
    assert.deepEqual(
      outputs.map((r) => (JSON.parse(r.Output) as { doubled: number }).doubled).sort((a, b) => a - b),
      items.map((i) => i.n * 2),
    );
    const child = await sfn.send(new DescribeExecutionCommand({ executionArn: outputs[0]!.ExecutionArn }));
    assert.equal(child.status, 'SUCCEEDED');
    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: out.executionArn, maxResults: 1000 }));
    const types = history.events!.map((e) => e.type);
    assert.ok(types.includes('MapStateEntered') && types.includes('MapRunStarted') && types.includes('MapRunSucceeded'));
    assert.ok(types.length < 20, `parent history holds the map run, not its ${items.length} items: ${types.length} events`);
  });

  test('more failed children than tolerated fail the Map with States.ExceedToleratedFailureThreshold (catchable)', async () => {
    const items = Array.from({ length: 20 }, (_, n) => ({ n, fail: n % 5 === 0 }));
    await putItems('work/failing.json', items);
    const tolerant = await run(await machine('distributed-tolerant', definition(25)), {
      bucket: stack.workingBucket,
      key: 'work/failing.json',
      concurrency: 4,
    });
    assert.equal(tolerant.status, 'SUCCEEDED');
    const { results } = JSON.parse(tolerant.output!) as { results: { ResultWriterDetails: { Key: string } } };
    const manifest = JSON.parse(await getText(results.ResultWriterDetails.Key)) as {
      ResultFiles: Record<string, Array<{ Key: string }>>;
    };
    const failed = (await getText(manifest.ResultFiles['FAILED']![0]!.Key)).trim().split('\n');
    assert.equal(failed.length, 4);
    assert.ok(failed.every((l) => (JSON.parse(l) as { Error: string }).Error === 'ItemBroken'));

    const strict = await run(await machine('distributed-strict', definition(0)), {
      bucket: stack.workingBucket,
      key: 'work/failing.json',
      concurrency: 1,
    });
    assert.equal(strict.status, 'SUCCEEDED', 'caught');
    assert.equal((JSON.parse(strict.output!) as { caught: { Error: string } }).caught.Error, 'States.ExceedToleratedFailureThreshold');
  });

  test('a missing items object is States.ItemReaderFailed', async () => {
    const out = await run(await machine('distributed-missing', definition(0)), {
      bucket: stack.workingBucket,
      key: 'work/none.json',
      concurrency: 1,
    });
    assert.equal((JSON.parse(out.output!) as { caught: { Error: string } }).caught.Error, 'States.ItemReaderFailed');
  });

  test('a ResultWriter pointed at the Object Locked evidence bucket fails: its PUTs carry no checksum (why results go to the working bucket)', async () => {
    const body = JSON.stringify([{ n: 1 }]);
    const checksum = createHash('sha256').update(body).digest('base64');
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: 'work/locked-items.json', Body: body, ChecksumSHA256: checksum }));
    const out = await run(await machine('distributed-locked', definition(0)), {
      bucket: stack.bucket,
      key: 'work/locked-items.json',
      concurrency: 1,
    });
    const caught = (JSON.parse(out.output!) as { caught: { Error: string; Cause: string } }).caught;
    assert.equal(caught.Error, 'States.ResultWriterFailed');
    assert.match(caught.Cause, /Content-MD5 OR x-amz-checksum- HTTP header is required/);
  });
});
