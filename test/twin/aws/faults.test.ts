import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { CreateStateMachineCommand, GetExecutionHistoryCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStack, type LocalStack } from '../../../twin/aws/stack.js';
import { closedExecution, fnArn, ROLE, smArn } from './helpers.js';

// The local runner's fault switch: Lambda throttles, service errors and timeouts injected into Task
// states by name, raised where AWS raises them, so Retry and Catch clauses are tested, not read.

const calls: Record<string, number> = {};
const count = (name: string) => {
  calls[name] = (calls[name] ?? 0) + 1;
};
const handlers = {
  'flt-work': (event: { n?: number }) => {
    count('work');
    return { worked: event.n ?? 0 };
  },
  'flt-other': () => {
    count('other');
    return { other: true };
  },
};

let stack: LocalStack;
let sfn: SFNClient;
let created = 0;

before(async () => {
  stack = await startLocalStack({
    prefix: 'flt',
    handlers,
    retryIntervalOverrideMs: 0,
    // Set at start: the option of the stack (the embedded Paperclip passes the same option through).
    faults: [{ state: 'Nowhere', error: 'Lambda.ServiceException', count: 1 }],
  });
  sfn = new SFNClient(stack.clientConfig('stepfunctions'));
});

after(async () => {
  sfn.destroy();
  await stack.stop();
});

beforeEach(() => {
  for (const key of Object.keys(calls)) delete calls[key];
  stack.stepFunctions.setFaults([]);
});

const caughtAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Caught' }];
const lambdaServiceErrors = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];

async function run(definition: object, input: unknown = {}) {
  const name = `faults-${created++}`;
  await sfn.send(new CreateStateMachineCommand({ name, definition: JSON.stringify(definition), roleArn: ROLE }));
  const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: smArn(name), input: JSON.stringify(input) }));
  const out = await closedExecution(sfn, executionArn!);
  const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: executionArn!, maxResults: 1000 }));
  return { ...out, parsed: out.output ? (JSON.parse(out.output) as Record<string, any>) : undefined, events: history.events ?? [] };
}

const oneTask = (extra: Record<string, unknown>) => ({
  StartAt: 'Work',
  States: {
    Work: { Type: 'Task', Resource: fnArn('flt-work'), Parameters: { n: 7 }, ResultPath: '$.work', End: true, ...extra },
    Caught: { Type: 'Pass', End: true },
  },
});

test('a throttle fails the task before the function runs; the Lambda service-error retrier rides it out', async () => {
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.TooManyRequestsException', count: 2 }]);
  const out = await run(oneTask({ Retry: [{ ErrorEquals: lambdaServiceErrors, MaxAttempts: 3 }], Catch: caughtAll }));
  assert.equal(out.status, 'SUCCEEDED', out.cause);
  assert.deepEqual(out.parsed?.['work'], { worked: 7 });
  assert.equal(calls['work'], 1, 'the two throttled attempts never reached the function');
  const failed = out.events.filter((e) => e.type === 'LambdaFunctionFailed').map((e) => e.lambdaFunctionFailedEventDetails?.error);
  assert.deepEqual(failed, ['Lambda.TooManyRequestsException', 'Lambda.TooManyRequestsException']);
  assert.match(out.events.find((e) => e.type === 'LambdaFunctionFailed')?.lambdaFunctionFailedEventDetails?.cause ?? '', /Rate Exceeded/);
  assert.deepEqual(stack.stepFunctions.faultsFired(), { 'Work Lambda.TooManyRequestsException': 2 });
});

test('without a retrier the throttle reaches the Catch, and the function never ran', async () => {
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.TooManyRequestsException', count: 1 }]);
  const out = await run(oneTask({ Catch: caughtAll }));
  assert.equal(out.status, 'SUCCEEDED');
  assert.equal(out.parsed?.['caught']?.Error, 'Lambda.TooManyRequestsException');
  assert.equal(calls['work'], undefined);
});

test('a service exception fails the task before the function runs', async () => {
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.ServiceException', count: 5 }]);
  const out = await run(oneTask({ Retry: [{ ErrorEquals: ['Lambda.ServiceException'], MaxAttempts: 2 }], Catch: caughtAll }));
  assert.equal(out.parsed?.['caught']?.Error, 'Lambda.ServiceException');
  assert.equal(calls['work'], undefined, 'three attempts, none ran the function');
  assert.deepEqual(stack.stepFunctions.faultsFired(), { 'Work Lambda.ServiceException': 3 });
});

test('Sandbox.Timedout comes after the function ran: its effects stay, its result is lost', async () => {
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Sandbox.Timedout', count: 1 }]);
  const out = await run(oneTask({ Catch: caughtAll }));
  assert.equal(calls['work'], 1, 'the function ran');
  assert.equal(out.parsed?.['caught']?.Error, 'Sandbox.Timedout');
  assert.equal(out.parsed?.['work'], undefined, 'its result never reached the state');
});

test('"*" throttles every Lambda task state, lambda:invoke included, and nothing else', async () => {
  stack.stepFunctions.setFaults([{ state: '*', error: 'Lambda.TooManyRequestsException', count: 1 }]);
  const retry = [{ ErrorEquals: ['Lambda.TooManyRequestsException'], MaxAttempts: 1 }];
  const out = await run({
    StartAt: 'First',
    States: {
      First: { Type: 'Task', Resource: fnArn('flt-work'), ResultPath: '$.a', Retry: retry, Next: 'Between' },
      Between: { Type: 'Pass', Next: 'Second' },
      Second: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: fnArn('flt-other'), Payload: {} },
        ResultPath: '$.b',
        Retry: retry,
        End: true,
      },
    },
  });
  assert.equal(out.status, 'SUCCEEDED', out.cause);
  assert.deepEqual(calls, { work: 1, other: 1 });
  assert.deepEqual(stack.stepFunctions.faultsFired(), {
    'First Lambda.TooManyRequestsException': 1,
    'Second Lambda.TooManyRequestsException': 1,
  });
  const taskFailed = out.events.filter((e) => e.type === 'TaskFailed').map((e) => e.taskFailedEventDetails?.error);
  assert.deepEqual(taskFailed, ['Lambda.TooManyRequestsException'], 'the service integration reports it as a task failure');
});

test('probability 1 fails every invocation, 0 none', async () => {
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.TooManyRequestsException', probability: 1 }]);
  const always = await run(oneTask({ Retry: [{ ErrorEquals: ['Lambda.TooManyRequestsException'], MaxAttempts: 4 }], Catch: caughtAll }));
  assert.equal(always.parsed?.['caught']?.Error, 'Lambda.TooManyRequestsException');
  assert.equal(calls['work'], undefined);
  stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.TooManyRequestsException', probability: 0 }]);
  const never = await run(oneTask({ Catch: caughtAll }));
  assert.deepEqual(never.parsed?.['work'], { worked: 7 });
});

test('another Task state fails before it starts with any error, and cause null leaves the Cause out', async () => {
  stack.stepFunctions.setFaults([{ state: 'Start', error: 'States.TaskFailed', cause: null, count: 1 }]);
  const out = await run({
    StartAt: 'Start',
    States: {
      Start: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution',
        Parameters: { StateMachineArn: smArn('does-not-matter'), Input: {} },
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'HasCause' }],
        End: true,
      },
      HasCause: { Type: 'Choice', Choices: [{ Variable: '$.failure.Cause', IsPresent: true, Next: 'Reason' }], Default: 'NoCause' },
      Reason: { Type: 'Pass', Parameters: { 'reason.$': '$.failure.Cause' }, End: true },
      NoCause: { Type: 'Pass', Parameters: { 'error.$': '$.failure.Error' }, End: true },
    },
  });
  assert.equal(out.status, 'SUCCEEDED', out.cause);
  assert.deepEqual(out.parsed, { error: 'States.TaskFailed' });
});

test('faults are validated: the field is named', () => {
  assert.throws(
    () => stack.stepFunctions.setFaults([{ state: 'Work', error: 'Lambda.ServiceException' }]),
    /faults\[0\]\.count: give exactly one of count/,
  );
  assert.throws(
    () => stack.stepFunctions.setFaults([{ state: '*', error: 'States.TaskFailed', count: 1 }]),
    /faults\[0\]\.error: state "\*"/,
  );
});
