import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepInput } from '../../src/app/guarded-write/state.js';
import { InputRejectedError } from '../../src/domain/errors.js';
import type { RoutedItem } from '../../src/domain/routing.js';
import { itemState } from '../app/guarded-write/memory-ports.js';
import { handler as snapshotHandler } from '../../lambdas/snapshot.js';
import { handler as takeoverHandler } from '../../lambdas/takeover.js';

/**
 * The Lambda boundary: each handler parses its event with the schema of the
 * workflow state that invokes it. These checks need no stack: a refused
 * event never reaches the services (no client is built, nothing is called).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface AslState {
  Type: string;
  Resource?: string;
  Parameters?: Record<string, Json>;
}

const item: RoutedItem = {
  key: 'k-0123456789abcdef0123456789abcdef01234567',
  taskId: 'T-20261202-acme',
  tenant: 'acme',
  billNo: 'ACME-202611-0001',
  action: 'mark_processed',
  params: {},
  requestedBy: 'schedule',
  identity: 'svc-recon-acme',
  reversibility: 'reversible',
  needsApproval: false,
  approvalTimeoutSeconds: 3600,
  tier: 'browser',
  inverse: 'unmark_processed',
  targetStatus: 'PROCESSED',
};

/** The state as the workflow carries it after Claim: ValidateRoute's nulls, the routed item, a held claim. */
const stateAfterClaim = {
  task: { taskId: item.taskId, tenant: item.tenant, billNo: item.billNo, action: item.action },
  ...itemState(item, {
    claim: { decision: 'proceed', claim: { owner: 'arn:aws:states:us-east-1:000000000000:execution:x:y', version: 1 } },
  }),
  approvalError: { Error: 'ApprovalRejected', Cause: 'rejected by controller@acme.example' },
};

const evidence = [
  { key: `evidence/acme/T-20261202-acme/${item.key}/before.png`, sha256: 'ab'.repeat(32), bytes: 1024, contentType: 'image/png' },
];

/** The same state after every step left its result, as Takeover sees it after a failed compensation. */
const stateAfterEveryStep = {
  ...stateAfterClaim,
  snapshot: { stale: false, preStatus: 'PENDING', source: 'list', evidence },
  approval: { approvalId: 'a-1', approver: 'controller@acme.example', decidedAt: '2026-12-02T01:00:00Z' },
  write: { tier: 'browser', committed: true, evidence, dialogs: [{ type: 'confirm', message: '确认?', accepted: true }] },
  writeError: { Error: 'AmbiguousOutcomeError', Cause: '{"errorType":"AmbiguousOutcomeError","errorMessage":"write may have landed"}' },
  readback: {
    verdict: 'not_applied',
    observedStatus: 'DISPUTED',
    source: 'list',
    observations: [{ status: 'DISPUTED', at: '2026-12-02T01:00:01Z', source: 'list' }],
    reason: 'list settled on DISPUTED, not PROCESSED',
    next: 'compensate',
    why: 'undo it',
    degraded: false,
    evidence,
  },
  takeoverReason: { Error: 'SessionLostError', Cause: 'login page' },
  compensation: { Error: 'States.TaskFailed', Cause: 'compensation timed out' },
  // Compensate's result and RunInverse's (here its Catch's), which RecordCompensation reads.
  compensating: {
    prepared: {
      compensates: item.key,
      inverseKey: 'k-acme_0123456789abcdef0123456789abcdef',
      inverseAction: 'unmark_processed',
      task: {
        ...stateAfterClaim.task,
        action: 'unmark_processed',
        params: {},
        requestedBy: 'compensation',
        compensates: `k-acme_${'f'.repeat(32)}`,
      },
      preStatus: 'PENDING',
      restoredTo: 'PENDING',
      requestedBy: 'compensation',
      start: true,
      result: null,
    },
    run: { Error: 'States.TaskFailed', Cause: '{"ExecutionArn":"arn:x","Status":"FAILED"}' },
  },
};

/** Evaluates the ASL's `.$` paths this workflow uses ($.a.b, $$.Execution.Id, $$.Task.Token) against a state. */
function evaluate(parameters: Json, state: Record<string, unknown>): unknown {
  if (Array.isArray(parameters) || parameters === null || typeof parameters !== 'object') return parameters;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parameters)) {
    if (!name.endsWith('.$')) {
      out[name] = evaluate(value, state);
      continue;
    }
    const path = String(value);
    let resolved: unknown;
    if (path === '$$.Execution.Id') resolved = 'arn:aws:states:us-east-1:000000000000:execution:x:y';
    else if (path === '$$.Task.Token') resolved = 'task-token';
    else if (path.startsWith('$.'))
      resolved = path
        .slice(2)
        .split('.')
        .reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], state);
    else if (path === '$') resolved = state;
    else throw new Error(`the test does not evaluate ${path}`);
    out[name.slice(0, -2)] = resolved;
  }
  return out;
}

test('every Lambda the guarded-write workflow invokes accepts the event its ASL state builds, nulls included', () => {
  const asl = JSON.parse(readFileSync('statemachines/guarded-write.asl.json', 'utf8')) as { States: Record<string, AslState> };
  const checked: string[] = [];
  for (const [stateName, state] of Object.entries(asl.States)) {
    // Service integrations other than Lambda (RunInverse's nested execution) invoke no function.
    if (state.Type !== 'Task' || !state.Parameters || /^arn:aws:states:::states:/.test(state.Resource ?? '')) continue;
    const waits = state.Resource?.includes('waitForTaskToken');
    const resource = waits ? String(state.Parameters['FunctionName']) : String(state.Resource);
    const fn = /^\$\{(\w+)FunctionArn\}$/.exec(resource)?.[1];
    assert.ok(fn, `${stateName} invokes ${resource}, which is not one of the workflow's functions`);
    const schema = StepInput[fn as keyof typeof StepInput];
    assert.ok(schema, `${stateName} invokes ${fn}, which has no input schema in StepInput`);
    // RecordCompensation is only reached after Compensate, whose result it reads.
    const samples = stateName === 'RecordCompensation' ? { stateAfterEveryStep } : { stateAfterClaim, stateAfterEveryStep };
    for (const [label, at] of Object.entries(samples)) {
      const event = evaluate(waits ? state.Parameters['Payload']! : state.Parameters, at);
      const parsed = schema.safeParse(event);
      assert.ok(parsed.success, `${stateName} -> ${fn} (${label}): ${parsed.success ? '' : JSON.stringify(parsed.error.issues[0])}`);
    }
    checked.push(fn);
  }
  assert.deepEqual([...new Set(checked)].sort(), [
    'BrowserWrite',
    'Claim',
    'Compensate',
    'Complete',
    'Readback',
    'RequestApproval',
    'Snapshot',
    'Takeover',
    'ValidateRoute',
  ]);
});

async function rejection(run: () => Promise<unknown>): Promise<InputRejectedError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof InputRejectedError, `expected an InputRejectedError, got ${String(error)}`);
  return error;
}

test('a handler refuses a state that violates its schema, naming the field', async () => {
  const { task: _task, approvalError: _approvalError, ...state } = stateAfterClaim;
  const noIdentity = await rejection(() => snapshotHandler({ ...state, item: { ...item, identity: undefined } }));
  assert.match(noIdentity.message, /^snapshot: event\.item\.identity: /);
  assert.equal(noIdentity.field, 'item.identity');

  const { write: _write, ...withoutWrite } = state;
  const absent = await rejection(() => snapshotHandler(withoutWrite));
  assert.match(absent.message, /^snapshot: event\.write: /, 'the workflow sets an absent result to null; a missing field is not its state');

  const badClaim = await rejection(() => snapshotHandler({ ...state, claim: { decision: 'maybe' } }));
  assert.match(badClaim.message, /^snapshot: event\.claim(\.decision)?: /);

  const stray = await rejection(() => takeoverHandler({ state: { ...state, extra: 1 }, executionArn: 'arn:x' }));
  assert.match(stray.message, /^takeover: event\.state: .*extra/);

  const badTier = await rejection(() =>
    takeoverHandler({ state: { ...state, item: { ...item, tier: 'telepathy' } }, executionArn: 'arn:x' }),
  );
  assert.match(badTier.message, /^takeover: event\.state\.item\.tier: /);
});

test('lambdas/ never casts its way past a schema (no `as unknown as`)', () => {
  const offenders = readdirSync('lambdas')
    .filter((name) => name.endsWith('.ts'))
    .filter((name) => readFileSync(join('lambdas', name), 'utf8').includes('as unknown as'));
  assert.deepEqual(offenders, []);
});
