import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CreateStateMachineCommand,
  DescribeStateMachineCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { awsClientConfig } from '../../../twin/aws/aws-config.js';
import { startLocalStepFunctions, type LocalStepFunctionsEndpoint } from '../../../twin/aws/stepfunctions/index.js';
import { awsError, closedExecution, deferred, fixture, fnArn, NamedError, REGION, ROLE, smArn } from './helpers.js';
import { setTimeout as sleep } from 'node:timers/promises';

interface ApprovalRequest {
  key: string;
  taskToken: string;
  approveUrl: string;
}

const calls = {
  classify: [] as unknown[],
  finish: [] as Array<{ event: unknown; context: unknown }>,
  flaky: new Map<string, number>(),
  strict: 0,
  work: new Map<string, number>(),
};
const approvalRequests: ApprovalRequest[] = [];
let approvalRequested = deferred<ApprovalRequest>();

const handlers = {
  'test-classify': (event: { amount: number }) => {
    calls.classify.push(event);
    return { kind: event.amount >= 100 ? 'big' : 'small' };
  },
  'test-finish': (event: unknown, context: unknown) => {
    calls.finish.push({ event, context });
    return { finished: event };
  },
  'test-flaky': (event: { id: string; failures: number }) => {
    const n = (calls.flaky.get(event.id) ?? 0) + 1;
    calls.flaky.set(event.id, n);
    if (n <= event.failures) throw new NamedError('TransientVendorError', `vendor busy (attempt ${n})`);
    return { attempts: n };
  },
  'test-strict': (event: { violate?: string }) => {
    calls.strict++;
    if (event.violate === 'policy') throw new NamedError('PolicyViolation', 'refund above limit');
    if (event.violate === 'crash') throw new TypeError('cannot read properties of undefined');
    return { ok: true };
  },
  'test-work': async (event: { key: string; amount: number }) => {
    calls.work.set(event.key, (calls.work.get(event.key) ?? 0) + 1);
    await sleep(30);
    if (event.amount < 0) throw new NamedError('NegativeAmount', `amount ${event.amount} for ${event.key}`);
    return { key: event.key, charged: event.amount };
  },
  'test-echo': (event: unknown, context: { stateName: string }) => ({ echoed: event, by: context.stateName }),
  'test-slow': () => sleep(1_500, { slow: true }),
  'test-request-approval': (event: ApprovalRequest) => {
    approvalRequests.push(event);
    approvalRequested.resolve(event);
    return { emailed: true };
  },
};

const substitutions = {
  ClassifyFunctionArn: fnArn('test-classify'),
  FinishFunctionArn: fnArn('test-finish'),
  FlakyFunctionArn: fnArn('test-flaky'),
  StrictFunctionArn: fnArn('test-strict'),
  WorkFunctionArn: fnArn('test-work'),
  RequestApprovalFunctionArn: fnArn('test-request-approval'),
  ChildStateMachineArn: smArn('child'),
  ApprovalTimeoutSeconds: '60',
};

let endpoint: LocalStepFunctionsEndpoint;
let sfn: SFNClient;

async function createMachine(name: string, definition: string): Promise<string> {
  const out = await sfn.send(new CreateStateMachineCommand({ name, definition, roleArn: ROLE }));
  return out.stateMachineArn!;
}

async function run(stateMachineArn: string, input: unknown, name?: string) {
  const { executionArn } = await sfn.send(
    new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input), ...(name ? { name } : {}) }),
  );
  return closedExecution(sfn, executionArn!);
}

before(async () => {
  endpoint = await startLocalStepFunctions({ handlers, retryIntervalOverrideMs: 0 });
  sfn = new SFNClient(awsClientConfig(endpoint.endpoint, REGION));
  await createMachine('task-choice-task', fixture('task-choice-task.asl.json', substitutions));
  await createMachine('retry-catch', fixture('retry-catch.asl.json', substitutions));
  await createMachine('child', fixture('child.asl.json', substitutions));
  await createMachine('batch', fixture('batch.asl.json', substitutions));
  await createMachine('approval', fixture('approval.asl.json', substitutions));
  await createMachine('approval-short', fixture('approval.asl.json', { ...substitutions, ApprovalTimeoutSeconds: '1' }));
});

after(async () => {
  sfn.destroy();
  await endpoint.stop();
});

describe('state machines', () => {
  test('CreateStateMachine is idempotent for the same definition and refuses a different one', async () => {
    const definition = fixture('child.asl.json', substitutions);
    assert.equal(await createMachine('child', definition), smArn('child'));
    const err = await awsError(createMachine('child', fixture('task-choice-task.asl.json', substitutions)));
    assert.equal(err.name, 'StateMachineAlreadyExists');
    const described = await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: smArn('child') }));
    assert.equal(described.definition, definition);
    assert.equal(described.type, 'STANDARD');
    const listed = await sfn.send(new ListStateMachinesCommand({}));
    assert.ok(listed.stateMachines?.some((m) => m.name === 'batch'));
  });

  test('an invalid definition is InvalidDefinition with the reason', async () => {
    const bad = JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Missing' } } });
    const err = await awsError(createMachine('bad', bad));
    assert.equal(err.name, 'InvalidDefinition');
    assert.match(err.message, /Missing/);
    assert.equal(err.$metadata?.httpStatusCode, 400);
  });

  test('a placeholder left in a definition is reported by name', async () => {
    const raw = JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Task', Resource: '${ForgottenFunctionArn}', End: true } } });
    const err = await awsError(createMachine('forgot', raw));
    assert.equal(err.name, 'InvalidDefinition');
    assert.match(err.message, /\$\{ForgottenFunctionArn\}/);
    assert.throws(() => fixture('approval.asl.json', { RequestApprovalFunctionArn: fnArn('x') }), /\$\{ApprovalTimeoutSeconds\}/);
  });

  test('resources the runner cannot execute are refused at creation', async () => {
    const raw = JSON.stringify({
      StartAt: 'A',
      States: { A: { Type: 'Task', Resource: 'arn:aws:states:::sns:publish', Parameters: { Message: 'x' }, End: true } },
    });
    const err = await awsError(createMachine('sns', raw));
    assert.equal(err.name, 'InvalidDefinition');
    assert.match(err.message, /sns:publish/);
  });
});

describe('executions', () => {
  test('Task -> Choice -> Task succeeds and DescribeExecution shows the output', async () => {
    const small = await run(smArn('task-choice-task'), { amount: 5 }, 'small-1');
    assert.equal(small.status, 'SUCCEEDED');
    const smallOut = JSON.parse(small.output!);
    assert.deepEqual(smallOut.finished, {
      route: 'small',
      amount: 5,
      execution: 'small-1',
      executionId: small.executionArn,
      stateMachine: 'task-choice-task',
    });
    const context = calls.finish.at(-1)!.context as Record<string, string>;
    assert.equal(context.stateName, 'HandleSmall');
    assert.equal(context.executionArn, small.executionArn);
    assert.equal(context.executionName, 'small-1');
    assert.equal(context.stateMachineName, 'task-choice-task');

    const big = await run(smArn('task-choice-task'), { amount: 500 });
    assert.equal(big.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(big.output!), { finished: { route: 'big', amount: 500, execution: big.name } });
    assert.ok(big.startDate instanceof Date && big.stopDate instanceof Date);
  });

  test('GetExecutionHistory returns Step Functions events in order', async () => {
    const done = await run(smArn('task-choice-task'), { amount: 500 });
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn: done.executionArn }));
    const types = events!.map((e) => e.type);
    assert.deepEqual(types, [
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    assert.deepEqual(
      events!.map((e) => e.id),
      events!.map((_, i) => i + 1),
    );
    assert.ok(events!.every((e) => e.timestamp instanceof Date));
    assert.equal(events![0]!.executionStartedEventDetails?.input, JSON.stringify({ amount: 500 }));
    assert.equal(events![6]!.stateEnteredEventDetails?.name, 'Route');
    assert.equal(events![9]!.taskScheduledEventDetails?.resourceType, 'lambda');
    assert.equal(events![9]!.taskScheduledEventDetails?.resource, 'invoke');

    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn: done.executionArn, maxResults: 5, reverseOrder: true }));
    assert.equal(page.events!.length, 5);
    assert.equal(page.events![0]!.type, 'ExecutionSucceeded');
    const rest = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn: done.executionArn, reverseOrder: true, nextToken: page.nextToken, maxResults: 100 }),
    );
    assert.equal(rest.events!.at(-1)!.type, 'ExecutionStarted');
  });

  test('Retry re-runs a handler that throws a retryable error, Catch matches a custom error name', async () => {
    const out = await run(smArn('retry-catch'), { id: 'r1', failures: 2, violate: 'policy' });
    assert.equal(out.status, 'SUCCEEDED');
    const result = JSON.parse(out.output!);
    assert.equal(result.outcome, 'rejected');
    assert.equal(result.error, 'PolicyViolation');
    assert.equal(result.attempts, 3);
    assert.equal(calls.flaky.get('r1'), 3);
    // Lambda's cause format: a JSON document with errorType and errorMessage.
    const cause = JSON.parse(result.cause);
    assert.equal(cause.errorType, 'PolicyViolation');
    assert.equal(cause.errorMessage, 'refund above limit');
  });

  test('States.TaskFailed catches any handler error', async () => {
    const out = await run(smArn('retry-catch'), { id: 'r2', failures: 0, violate: 'crash' });
    assert.deepEqual(JSON.parse(out.output!), { outcome: 'crashed', error: 'TypeError' });
  });

  test('exhausted retries fail the execution with the handler error', async () => {
    const out = await run(smArn('retry-catch'), { id: 'r3', failures: 99 });
    assert.equal(out.status, 'FAILED');
    assert.equal(out.error, 'TransientVendorError');
    assert.equal(calls.flaky.get('r3'), 4, 'first attempt + MaxAttempts 3');
  });

  test('StartExecution errors: bad names, unknown state machine, malformed ARN, bad input', async () => {
    const arn = smArn('task-choice-task');
    const tooLong = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'x'.repeat(81) })));
    assert.equal(tooLong.name, 'ValidationException');
    const spaced = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'has space' })));
    assert.equal(spaced.name, 'InvalidName');
    const missing = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: smArn('nope') })));
    assert.equal(missing.name, 'StateMachineDoesNotExist');
    const malformed = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: 'arn:aws:states:nowhere' })));
    assert.equal(malformed.name, 'InvalidArn');
    const input = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{not json' })));
    assert.equal(input.name, 'InvalidExecutionInput');
  });

  test('execution names are unique per state machine; a running duplicate with the same input is the same execution', async () => {
    const arn = smArn('approval');
    approvalRequested = deferred();
    const input = JSON.stringify({ key: 'dup-1' });
    const first = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'dup-1', input }));
    const again = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'dup-1', input }));
    assert.equal(again.executionArn, first.executionArn);
    const different = await awsError(
      sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'dup-1', input: JSON.stringify({ key: 'other' }) })),
    );
    assert.equal(different.name, 'ExecutionAlreadyExists');
    const request = await approvalRequested.promise;
    await sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: JSON.stringify({ approver: 'a' }) }));
    await closedExecution(sfn, first.executionArn!);
    const closed = await awsError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'dup-1', input })));
    assert.equal(closed.name, 'ExecutionAlreadyExists');
  });

  test('ListExecutions filters by state machine and status', async () => {
    const all = await sfn.send(new ListExecutionsCommand({ stateMachineArn: smArn('retry-catch') }));
    assert.ok(all.executions!.length >= 3);
    const failed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: smArn('retry-catch'), statusFilter: 'FAILED' }));
    assert.ok(failed.executions!.length >= 1);
    assert.ok(failed.executions!.every((e) => e.status === 'FAILED' && e.stateMachineArn === smArn('retry-catch')));
  });
});

describe('child executions (startExecution.sync:2)', () => {
  test('a Map starts one child per item; a duplicate name is caught and never runs the child twice', async () => {
    const out = await run(smArn('batch'), {
      items: [
        { key: 'K1', amount: 1 },
        { key: 'K2', amount: 2 },
        { key: 'K1', amount: 99 },
        { key: 'K3', amount: -1 },
      ],
    });
    assert.equal(out.status, 'SUCCEEDED');
    const results = JSON.parse(out.output!);
    assert.deepEqual(results[0], { key: 'K1', charged: 1 });
    assert.deepEqual(results[1], { key: 'K2', charged: 2 });
    assert.deepEqual(results[2], { key: 'K1', skipped: true, error: 'StepFunctions.ExecutionAlreadyExistsException' });
    assert.equal(results[3].failed, true);
    assert.equal(results[3].error, 'States.TaskFailed');
    const childDescription = JSON.parse(results[3].cause);
    assert.equal(childDescription.Status, 'FAILED');
    assert.equal(childDescription.Error, 'NegativeAmount');

    assert.equal(calls.work.get('K1'), 1, 'the duplicate item did not run the child again');
    const children = await sfn.send(new ListExecutionsCommand({ stateMachineArn: smArn('child') }));
    assert.deepEqual(children.executions!.map((e) => e.name).sort(), ['K1', 'K2', 'K3']);
    const k1 = children.executions!.find((e) => e.name === 'K1')!;
    const k1Closed = await closedExecution(sfn, k1.executionArn!);
    assert.equal(k1Closed.status, 'SUCCEEDED');
    assert.equal(JSON.parse(k1Closed.input!).AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID, out.executionArn);

    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: out.executionArn, maxResults: 1000 }));
    const types: string[] = history.events!.map((e) => String(e.type));
    for (const t of ['MapStateEntered', 'MapIterationStarted', 'MapIterationSucceeded', 'TaskSubmitted', 'TaskFailed', 'MapStateExited']) {
      assert.ok(types.includes(t), `history has ${t}`);
    }
  });
});

describe('callbacks (lambda:invoke.waitForTaskToken)', () => {
  test('SendTaskSuccess releases the task with its output', async () => {
    approvalRequested = deferred();
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: smArn('approval'), input: JSON.stringify({ key: 'ok-1' }) }),
    );
    const request = await approvalRequested.promise;
    assert.equal(request.key, 'ok-1');
    assert.ok(request.taskToken.length > 40);
    assert.ok(!request.taskToken.includes('placeholder'));
    assert.equal(request.approveUrl, `http://approvals.local/approve?token=${request.taskToken}`);
    await sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: JSON.stringify({ approver: 'lin@example.com' }) }));
    const done = await closedExecution(sfn, executionArn!);
    assert.equal(done.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(done.output!), { outcome: 'approved', approver: 'lin@example.com' });
    const late = await awsError(sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: '{}' })));
    assert.equal(late.name, 'TaskTimedOut');
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
    const types = events!.map((e) => e.type);
    assert.deepEqual(types.slice(1, 7), [
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSubmitted',
      'TaskSucceeded',
      'TaskStateExited',
    ]);
  });

  test('SendTaskFailure fails the task with the given error name, caught by Catch', async () => {
    approvalRequested = deferred();
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: smArn('approval'), input: JSON.stringify({ key: 'no-1' }) }),
    );
    const request = await approvalRequested.promise;
    await sfn.send(new SendTaskFailureCommand({ taskToken: request.taskToken, error: 'ApprovalRejected', cause: 'amount too high' }));
    const done = await closedExecution(sfn, executionArn!);
    assert.deepEqual(JSON.parse(done.output!), { outcome: 'rejected', reason: 'amount too high' });
  });

  test('a task not answered within TimeoutSeconds fails with States.Timeout', async () => {
    approvalRequested = deferred();
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: smArn('approval-short'), input: JSON.stringify({ key: 'late-1' }) }),
    );
    const request = await approvalRequested.promise;
    const done = await closedExecution(sfn, executionArn!);
    assert.deepEqual(JSON.parse(done.output!), { outcome: 'expired', error: 'States.Timeout' });
    const late = await awsError(sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: '{}' })));
    assert.equal(late.name, 'TaskTimedOut');
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
    assert.ok(events!.some((e) => e.type === 'TaskTimedOut'));
  });

  test('concurrent callback tasks get distinct tokens', async () => {
    const before = approvalRequests.length;
    const started = await Promise.all(
      ['c-1', 'c-2', 'c-3'].map((key) =>
        sfn.send(new StartExecutionCommand({ stateMachineArn: smArn('approval'), input: JSON.stringify({ key }) })),
      ),
    );
    while (approvalRequests.length < before + 3) await sleep(10);
    const requests = approvalRequests.slice(before);
    assert.equal(new Set(requests.map((r) => r.taskToken)).size, 3);
    for (const r of requests) {
      await sfn.send(new SendTaskSuccessCommand({ taskToken: r.taskToken, output: JSON.stringify({ approver: r.key }) }));
    }
    for (const s of started) {
      const done = await closedExecution(sfn, s.executionArn!);
      const input = JSON.parse(done.input!);
      assert.deepEqual(JSON.parse(done.output!), { outcome: 'approved', approver: input.key });
    }
  });

  test('unknown tokens are InvalidToken; malformed output is InvalidOutput', async () => {
    const unknown = await awsError(sfn.send(new SendTaskSuccessCommand({ taskToken: 'not-a-real-token', output: '{}' })));
    assert.equal(unknown.name, 'InvalidToken');
    const unknownFailure = await awsError(sfn.send(new SendTaskFailureCommand({ taskToken: 'not-a-real-token' })));
    assert.equal(unknownFailure.name, 'InvalidToken');

    approvalRequested = deferred();
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: smArn('approval'), input: JSON.stringify({ key: 'bad-output' }) }),
    );
    const request = await approvalRequested.promise;
    const bad = await awsError(sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: '{oops' })));
    assert.equal(bad.name, 'InvalidOutput');
    await sfn.send(new StopExecutionCommand({ executionArn, error: 'Operator.Cancelled', cause: 'test cleanup' }));
    const stopped = await closedExecution(sfn, executionArn!);
    assert.equal(stopped.status, 'ABORTED');
    assert.equal(stopped.error, 'Operator.Cancelled');
    const afterStop = await awsError(sfn.send(new SendTaskSuccessCommand({ taskToken: request.taskToken, output: '{}' })));
    assert.equal(afterStop.name, 'TaskTimedOut');
  });
});

describe('more ASL shapes', () => {
  const task = (fn: string, extra: Record<string, unknown> = {}) => ({ Type: 'Task', Resource: fnArn(fn), ...extra });
  /** A machine of `States`, started at the first of them; `top` adds top-level fields (TimeoutSeconds). */
  const machine = (name: string, States: Record<string, unknown>, top: Record<string, unknown> = {}) =>
    createMachine(name, JSON.stringify({ ...top, StartAt: Object.keys(States)[0], States }));

  test('Task states inside Parallel branches and Map iterations call their handlers', async () => {
    const arn = await machine('nested-shapes', {
      Both: {
        Type: 'Parallel',
        Branches: [
          { StartAt: 'Left', States: { Left: task('test-echo', { End: true }) } },
          {
            StartAt: 'Each',
            States: {
              Each: {
                Type: 'Map',
                ItemsPath: '$.items',
                ItemSelector: { 'item.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index' },
                ItemProcessor: { StartAt: 'Inner', States: { Inner: task('test-echo', { End: true }) } },
                End: true,
              },
            },
          },
        ],
        End: true,
      },
    });
    const out = await run(arn, { items: ['a', 'b'] });
    assert.equal(out.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(out.output!), [
      { echoed: { items: ['a', 'b'] }, by: 'Left' },
      [
        { echoed: { item: 'a', index: 0 }, by: 'Inner' },
        { echoed: { item: 'b', index: 1 }, by: 'Inner' },
      ],
    ]);
  });

  test('a handler name missing from the map fails with Lambda.ResourceNotFoundException', async () => {
    const arn = await machine('missing-fn', { A: task('test-not-registered', { End: true }) });
    const out = await run(arn, {});
    assert.equal(out.status, 'FAILED');
    assert.equal(out.error, 'Lambda.ResourceNotFoundException');
    assert.match(out.cause!, /test-not-registered/);
  });

  test('startExecution (no .sync) returns at once with the child ARN', async () => {
    const arn = await machine('fire-and-forget', {
      Start: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution',
        Parameters: { StateMachineArn: smArn('child'), 'Name.$': '$.key', Input: { 'key.$': '$.key', amount: 5 } },
        End: true,
      },
    });
    const out = await run(arn, { key: 'FF-1' });
    assert.equal(out.status, 'SUCCEEDED');
    const { ExecutionArn } = JSON.parse(out.output!);
    assert.match(ExecutionArn, /:execution:child:FF-1$/);
    const child = await closedExecution(sfn, ExecutionArn);
    assert.deepEqual(JSON.parse(child.output!), { key: 'FF-1', charged: 5 });
  });

  test('an execution past the state machine TimeoutSeconds is TIMED_OUT', async () => {
    const arn = await machine('too-slow', { Slow: task('test-slow', { End: true }) }, { TimeoutSeconds: 1 });
    const out = await run(arn, {});
    assert.equal(out.status, 'TIMED_OUT');
    assert.equal(out.error, 'States.Timeout');
    const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn: out.executionArn }));
    assert.equal(events!.at(-1)!.type, 'ExecutionTimedOut');
  });

  test('stopping a parent stops the child its .sync task waits for', async () => {
    const arn = await machine('waits-for-approval-child', {
      Child: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution.sync:2',
        Parameters: { StateMachineArn: smArn('approval'), 'Name.$': '$.key', Input: { 'key.$': '$.key' } },
        End: true,
      },
    });
    approvalRequested = deferred();
    const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: JSON.stringify({ key: 'stop-me' }) }));
    await approvalRequested.promise;
    await sfn.send(new StopExecutionCommand({ executionArn }));
    assert.equal((await closedExecution(sfn, executionArn!)).status, 'ABORTED');
    const child = await closedExecution(sfn, `arn:aws:states:${REGION}:000000000000:execution:approval:stop-me`);
    assert.equal(child.status, 'ABORTED');
  });
});
