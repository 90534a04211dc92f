import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { STATE_MACHINES, WORKFLOW_FUNCTIONS, functionArnVariable, stateMachineArnVariable } from '../../../src/contracts/functions.js';
import { classifyResource, loadProjectStateMachines, prepareDefinition } from '../../../twin/aws/stepfunctions/definition.js';
import { localSubstitutions } from '../../../twin/aws/stepfunctions/index.js';
import { loadStateMachineDefinition, substituteDefinition } from '../../../src/contracts/asl.js';
import { nameProblem } from '../../../twin/aws/stepfunctions/arns.js';
import { temporaryFolder } from './helpers.js';

test('localSubstitutions maps every function and state machine variable to a local ARN', () => {
  const subs = localSubstitutions('pc', 'us-east-1', '000000000000');
  for (const fn of WORKFLOW_FUNCTIONS) {
    assert.equal(subs[functionArnVariable(fn.id)], `arn:aws:lambda:us-east-1:000000000000:function:pc-${fn.name}`);
  }
  for (const sm of STATE_MACHINES) {
    assert.equal(subs[stateMachineArnVariable(sm.id)], `arn:aws:states:us-east-1:000000000000:stateMachine:pc-${sm.name}`);
  }
});

test('substituteDefinition names every unresolved placeholder and the source', () => {
  const text = '{"A":"${OneArn}","B":"${TwoArn}","C":"${OneArn}","D":"${Known}"}';
  assert.throws(
    () => substituteDefinition(text, { Known: 'x' }, 'demo.asl.json'),
    (err: Error) =>
      /demo\.asl\.json/.test(err.message) && /\$\{OneArn\}, \$\{TwoArn\}/.test(err.message) && /known: Known/.test(err.message),
  );
  assert.equal(substituteDefinition('{"a":"${X}","n":${N}}', { X: 'arn:x', N: '3' }), '{"a":"arn:x","n":3}');
});

test('loadStateMachineDefinition names the file when the result is not JSON', () => {
  const dir = temporaryFolder('asl');
  try {
    const file = join(dir.path, 'broken.asl.json');
    writeFileSync(file, '{"StartAt": ${Start}}');
    assert.throws(() => loadStateMachineDefinition(file, { Start: 'not json' }), /broken\.asl\.json: not valid JSON after substitution/);
    assert.equal(loadStateMachineDefinition(file, { Start: '"A"' }), '{"StartAt": "A"}');
  } finally {
    dir.remove();
  }
});

test('task resources are classified; anything else is refused', () => {
  assert.deepEqual(classifyResource('arn:aws:lambda:eu-west-1:123456789012:function:pc-claim'), {
    kind: 'lambda-function',
    functionName: 'pc-claim',
  });
  assert.deepEqual(classifyResource('arn:aws:lambda:eu-west-1:123456789012:function:pc-claim:live'), {
    kind: 'lambda-function',
    functionName: 'pc-claim',
  });
  assert.deepEqual(classifyResource('arn:aws:states:::lambda:invoke.waitForTaskToken'), { kind: 'lambda-invoke', waitForTaskToken: true });
  assert.deepEqual(classifyResource('arn:aws:states:::states:startExecution.sync:2'), { kind: 'start-execution', pattern: 'sync:2' });
  assert.equal(classifyResource('arn:aws:states:::dynamodb:putItem'), undefined);
});

test('waitForTaskToken tasks must pass the token, and state names must be unique across nesting', () => {
  const noToken = {
    StartAt: 'Wait',
    States: {
      Wait: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Parameters: { FunctionName: 'f', Payload: {} },
        End: true,
      },
    },
  };
  assert.throws(() => prepareDefinition(JSON.stringify(noToken)), /must pass \$\$\.Task\.Token/);
  const duplicate = {
    StartAt: 'Each',
    States: {
      Each: {
        Type: 'Map',
        ItemProcessor: { StartAt: 'Each', States: { Each: { Type: 'Pass', End: true } } },
        End: true,
      },
    },
  };
  assert.throws(() => prepareDefinition(JSON.stringify(duplicate)), /DUPLICATE_STATE_NAME[^\n]*Each|"Each" is used twice/);
});

test('execution names follow the Step Functions rule', () => {
  assert.equal(nameProblem('name', 'T-1.k_2-abc'), undefined);
  assert.equal(nameProblem('name', 'x'.repeat(81))?.type, 'ValidationException');
  assert.equal(nameProblem('name', '')?.type, 'ValidationException');
  for (const bad of ['a b', 'a:b', 'a/b', 'a*b', 'a{b', 'a\u0001b', 'a$b']) {
    assert.equal(nameProblem('name', bad)?.type, 'InvalidName', bad);
  }
});

test('the project state machines load with local substitutions and pass validation', (t) => {
  if (!STATE_MACHINES.every((sm) => existsSync(join('statemachines', sm.file)))) {
    t.skip('statemachines/ is not complete in this checkout');
    return;
  }
  for (const sm of loadProjectStateMachines('statemachines', 'pc', 'us-east-1', '000000000000')) {
    const prepared = prepareDefinition(sm.definition);
    assert.ok(prepared.tasks.size > 0, `${sm.name} has Task states`);
  }
});
