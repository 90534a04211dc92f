import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STATE_MACHINES, WORKFLOW_FUNCTIONS, functionArnVariable, stateMachineArnVariable } from '../../src/workflow/functions.js';
import { applySubstitutions, retriedLambdaServiceErrors, substitutionVariables, type AslMachine } from '../../cdk/lib/asl.js';
import { PROJECT_ROOT } from '../../cdk/lib/app.js';
import { ungrantedTaskResources } from '../../cdk/lib/workflows.js';
import { assertNoLambdaServiceRetry, assertRetriesLambdaServiceErrors, assertTaskTokenWaitsTimeOut } from './asl-assertions.js';

const read = (file: string) => readFileSync(join(PROJECT_ROOT, 'statemachines', file), 'utf8');

describe('ASL helpers', () => {
  const machine: AslMachine = {
    StartAt: 'Outer',
    States: {
      Outer: {
        Type: 'Map',
        ItemProcessor: {
          StartAt: 'Write',
          States: {
            Write: { Type: 'Task', Resource: 'arn', Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }], End: true },
            Read: { Type: 'Task', Resource: 'arn', Retry: [{ ErrorEquals: ['Lambda.ServiceException'] }], End: true },
            Disabled: { Type: 'Task', Resource: 'arn', Retry: [{ ErrorEquals: ['States.TaskFailed'], MaxAttempts: 0 }], End: true },
          },
        },
        End: true,
      },
    },
  };

  it('sees retries through wildcards and inside Map processors, and ignores MaxAttempts 0', () => {
    assert.equal(retriedLambdaServiceErrors(machine.States['Outer']!.ItemProcessor!.States['Write']!).length, 4);
    assert.deepEqual(retriedLambdaServiceErrors(machine.States['Outer']!.ItemProcessor!.States['Read']!), ['Lambda.ServiceException']);
    assert.throws(() => assertNoLambdaServiceRetry(machine, 'Write'), /Write retries Lambda\.AWSLambdaException/);
    assertNoLambdaServiceRetry(machine, 'Disabled');
    assert.throws(() => assertNoLambdaServiceRetry(machine, 'Nowhere'), /no state named Nowhere/);
  });

  it('finds substitution variables and applies them like CloudFormation', () => {
    const text = '{"Resource":"${ClaimFunctionArn}","Other":"$$.Execution.Id","Again":"${ClaimFunctionArn}"}';
    assert.deepEqual(substitutionVariables(text), ['ClaimFunctionArn']);
    assert.equal(applySubstitutions(text, { ClaimFunctionArn: 'arn:x' }), '{"Resource":"arn:x","Other":"$$.Execution.Id","Again":"arn:x"}');
  });
});

describe('statemachines/*.asl.json', () => {
  const known = new Set([
    ...WORKFLOW_FUNCTIONS.map((f) => functionArnVariable(f.id)),
    ...STATE_MACHINES.map((m) => stateMachineArnVariable(m.id)),
  ]);

  it('use only substitution variables the CDK app provides', () => {
    for (const machine of STATE_MACHINES) {
      const unknown = substitutionVariables(read(machine.file)).filter((v) => !known.has(v));
      assert.deepEqual(unknown, [], machine.file);
    }
  });

  it('never retry the write on Lambda service errors, but retry the idempotent steps', () => {
    const guarded = JSON.parse(read('guarded-write.asl.json')) as AslMachine;
    assertNoLambdaServiceRetry(guarded, 'BrowserWrite');
    for (const step of ['ValidateRoute', 'Claim', 'Snapshot', 'Readback']) assertRetriesLambdaServiceErrors(guarded, step);
    const batch = JSON.parse(read('batch.asl.json')) as AslMachine;
    assertRetriesLambdaServiceErrors(batch, 'ReadList');
  });

  it('use only task integrations the workflow roles are granted', () => {
    for (const machine of STATE_MACHINES) assert.deepEqual(ungrantedTaskResources(read(machine.file)), [], machine.file);
    const foreign = JSON.stringify({
      StartAt: 'Put',
      States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', End: true } },
    });
    assert.deepEqual(ungrantedTaskResources(foreign), ['Put: arn:aws:states:::dynamodb:putItem']);
  });

  it('bound every wait for a task token', () => {
    assertTaskTokenWaitsTimeOut(JSON.parse(read('guarded-write.asl.json')) as AslMachine);
  });
});
