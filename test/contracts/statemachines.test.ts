import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { localSubstitutions } from '../../twin/aws/stepfunctions/index.js';
import { allStates, loadStateMachineDefinition } from '../../src/contracts/asl.js';
import { StateMachine } from '../../twin/aws/stepfunctions/library.js';
import { STATE_MACHINES, WORKFLOW_FUNCTIONS, functionArnVariable } from '../../src/contracts/functions.js';
import { applyPolicy } from '../../src/contracts/definition-policy.js';

type State = Record<string, any>;
const load = (file: string) =>
  JSON.parse(
    applyPolicy(loadStateMachineDefinition(resolve('statemachines', file), localSubstitutions('p', 'us-east-1', '000000000000')), {
      approval_timeout_seconds: 120,
    }),
  ) as { States: Record<string, State> };

test('both state machines are valid ASL once substituted', () => {
  for (const sm of STATE_MACHINES) {
    const definition = load(sm.file);
    assert.doesNotThrow(() => new StateMachine(definition as never), sm.file);
  }
});

test('the write step is retried only when nothing ran: Lambda throttled it, or no vendor session slot was free; reads are retried', () => {
  const { States } = load('guarded-write.asl.json');
  assert.deepEqual(
    (States['BrowserWrite']!['Retry'] as State[]).map((r) => r['ErrorEquals']),
    [['Lambda.TooManyRequestsException'], ['VendorSessionsBusyError']],
  );
  assert.ok(States['Readback']!['Retry'].some((r: State) => r['ErrorEquals'].includes('ReadFailedError')));
  assert.ok(States['Snapshot']!['Retry'].some((r: State) => r['ErrorEquals'].includes('ReadFailedError')));
  for (const name of ['ValidateRoute', 'Snapshot', 'BrowserWrite', 'Readback']) {
    const busy = (States[name]!['Retry'] as State[]).find((r) => r['ErrorEquals'].includes('VendorSessionsBusyError'));
    assert.ok(busy && busy['MaxAttempts'] >= 3 && busy['BackoffRate'] > 1, `${name} waits out busy vendor sessions with backoff`);
  }
  const batch = load('batch.asl.json').States['ReadList']!['Retry'] as State[];
  assert.ok(
    batch.some((r) => r['ErrorEquals'].includes('VendorSessionsBusyError')),
    'ReadList waits out busy vendor sessions',
  );
  const write = States['BrowserWrite']!['Catch'] as State[];
  assert.equal(
    write.find((c) => c['ErrorEquals'].includes('States.ALL'))!['Next'],
    'Readback',
    'an unknown failure after the click is read back, not retried',
  );
});

test('approval waits on a task token with the timeout from policy, and rejection or expiry execute nothing', () => {
  const { States } = load('guarded-write.asl.json');
  const approval = States['RequestApproval']!;
  assert.equal(approval['Resource'], 'arn:aws:states:::lambda:invoke.waitForTaskToken');
  assert.equal(approval['TimeoutSeconds'], 120);
  assert.equal(approval['Parameters']['Payload']['taskToken.$'], '$$.Task.Token');
  const next = Object.fromEntries((approval['Catch'] as State[]).map((c) => [c['ErrorEquals'][0], c['Next']]));
  // A rejection may come without a cause (SendTaskFailure's is optional): a Choice makes sure ApprovalRejected has one.
  assert.equal(next['ApprovalRejected'], 'RejectionHasReason');
  assert.equal(States['RejectionHasReason']!['Choices'][0]['Next'], 'ApprovalRejected');
  assert.equal(States['RejectionWithoutReason']!['Next'], 'ApprovalRejected');
  assert.equal(next['States.Timeout'], 'ApprovalExpired');
  for (const closed of ['ApprovalRejected', 'ApprovalExpired']) assert.notEqual(States[closed]!['Next'], 'BrowserWrite');
});

test('the batch names each child execution by its idempotency key and bounds concurrency', () => {
  const { States } = load('batch.asl.json');
  const map = States['ProcessItems']!;
  assert.equal(map['MaxConcurrencyPath'], '$.list.maxConcurrency');
  const children = [...allStates(map['ItemProcessor'])].filter(([, s]) =>
    String(s['Resource']).startsWith('arn:aws:states:::states:startExecution'),
  );
  assert.equal(children.length, 2);
  for (const [, child] of children) assert.equal(child.Parameters?.['Name.$'], '$.key');
});

test('every function the workflows call is in the shared function list', () => {
  const text = STATE_MACHINES.map((sm) => JSON.stringify(load(sm.file))).join('\n');
  for (const f of WORKFLOW_FUNCTIONS) assert.ok(!text.includes(`\${${functionArnVariable(f.id)}}`));
  const called = [...text.matchAll(/function:p-([a-z-]+)/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(called)].sort(), WORKFLOW_FUNCTIONS.map((f) => f.name).sort());
});

/** `name` runs the Complete function closing as `closeAs`, ends the workflow, and retries a failure of any kind. */
function assertClosedByComplete(States: Record<string, State>, name: string, closeAs: string): void {
  assert.equal(States[name]!['Resource'], States['Complete']!['Resource'], name);
  assert.equal(States[name]!['Parameters']['closeAs'], closeAs, name);
  assert.equal(States[name]!['End'], true, name);
  assert.ok((States[name]!['Retry'] as State[]).at(-1)!['ErrorEquals'].includes('States.ALL'), name);
}

test('a stale item is closed by the Complete function, like every outcome without a person', () => {
  // Closing a stale item is safe to repeat (complete.ts closeStale), so a failure of any kind is tried again.
  assertClosedByComplete(load('guarded-write.asl.json').States, 'Stale', 'stale');
});

test('a blocked item is closed by the Complete function, safe to repeat, and ends there', () => {
  const { States } = load('guarded-write.asl.json');
  const choice = (States['ClaimDecision']!['Choices'] as State[]).find((c) => c['StringEquals'] === 'blocked');
  assert.equal(choice?.['Next'], 'Blocked');
  assertClosedByComplete(States, 'Blocked', 'blocked');
});

test('a close refused by the claim fence ends skipped, never as a failed execution', () => {
  const { States } = load('guarded-write.asl.json');
  for (const name of ['Complete', 'ApprovalRejected', 'ApprovalExpired']) {
    const fenced = (States[name]!['Catch'] as State[]).find((c) => c['ErrorEquals'].includes('ClaimFencedError'));
    assert.equal(fenced?.['Next'], 'FencedAtClose', name);
  }
  assert.equal(States['FencedAtClose']!['Parameters']['outcome'], 'skipped');
});

test("a typed figure that is not the vendor's closes the item rejected from Snapshot, never reaching RequestApproval or the write", () => {
  const { States } = load('guarded-write.asl.json');
  const catches = States['Snapshot']!['Catch'] as State[];
  assert.deepEqual(catches[0], {
    ErrorEquals: ['VendorFigureMismatchError'],
    ResultPath: '$.takeoverReason',
    Next: 'FigureMismatchHasCause',
  });
  assert.equal(States['FigureMismatchHasCause']!['Choices'][0]['Next'], 'FigureMismatch');
  assert.equal(States['FigureMismatch']!['Next'], 'FigureMismatchReason');
  assert.equal(States['FigureMismatchReason']!['Next'], 'FigureMismatchRejected');
  const closed = States['FigureMismatchRejected']!;
  assert.equal(closed['Resource'], States['Complete']!['Resource']);
  assert.equal(closed['Parameters']['closeAs'], 'rejected');
  assert.equal(closed['Parameters']['reason.$'], '$.figureMismatch.reason');
  assert.equal(closed['Next'], 'Done');
});
