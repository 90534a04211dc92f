import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  allStates,
  applySubstitutions,
  substituteDefinition,
  substitutionVariables,
  walkStates,
  type AslMachine,
} from '../../src/contracts/asl.js';
import { prepareDefinition } from '../../twin/aws/stepfunctions/definition.js';
import { hasDistributedMap } from '../../cdk/lib/workflows.js';

const nested: AslMachine = {
  StartAt: 'Fork',
  States: {
    Fork: {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'Left', States: { Left: { Type: 'Pass', End: true } } },
        {
          StartAt: 'Items',
          States: {
            Items: {
              Type: 'Map',
              ItemProcessor: {
                ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
                StartAt: 'Each',
                States: { Each: { Type: 'Pass', End: true } },
              },
              End: true,
            },
          },
        },
      ],
      End: true,
    },
  },
};

test('the walker meets every state once, nested ones after their parent, and says where each stands', () => {
  assert.deepEqual(
    [...walkStates(nested)].map(({ name, where }) => `${name} ${where}`),
    ['Fork top level', 'Left in branch 0 of Parallel "Fork"', 'Items in branch 1 of Parallel "Fork"', 'Each in Distributed Map "Items"'],
  );
  assert.deepEqual([...allStates(nested).keys()], ['Fork', 'Left', 'Items', 'Each']);
});

test('a state replaced while it is visited is still walked into as it was', () => {
  const machine = structuredClone(nested);
  const names: string[] = [];
  for (const { name, machine: holder } of walkStates(machine)) {
    names.push(name);
    if (name === 'Items') holder.States[name] = { Type: 'Pass', End: true };
  }
  assert.deepEqual(names, ['Fork', 'Left', 'Items', 'Each']);
  assert.equal(machine.States['Fork']!.Branches![1]!.States['Items']!.Type, 'Pass');
});

test('CDK and the local runner see a nested Distributed Map through the same walker', () => {
  // The CDK grants map-run permissions for it; the local runner rewrites it into its own task.
  assert.equal(hasDistributedMap(JSON.stringify(nested)), true);
  const prepared = prepareDefinition(JSON.stringify(nested), { validate: false });
  assert.deepEqual([...prepared.distributedMaps.keys()], ['Items']);
  assert.equal([...prepared.stateTypes.keys()].join(), 'Fork,Left,Items,Each');
});

test('one variable pattern: what CDK lists is what the local loader requires, dotted names included', () => {
  const text = '{"A":"${ClaimFunctionArn}","B":"${Child.Arn}","C":"$$.Execution.Id","D":"$.x"}';
  // CDK checks these names against what it provides; a name it did not see would be deployed unreplaced.
  assert.deepEqual(substitutionVariables(text), ['Child.Arn', 'ClaimFunctionArn']);
  assert.equal(
    applySubstitutions(text, { 'Child.Arn': 'arn:c' }),
    '{"A":"${ClaimFunctionArn}","B":"arn:c","C":"$$.Execution.Id","D":"$.x"}',
  );
  assert.throws(
    () => substituteDefinition(text, { 'Child.Arn': 'arn:c' }, 'x.asl.json'),
    /x\.asl\.json: unresolved placeholder\(s\) \$\{ClaimFunctionArn\}/,
  );
  assert.throws(() => prepareDefinition(text), /unresolved placeholder\(s\) \$\{Child\.Arn\}, \$\{ClaimFunctionArn\}/);
});
