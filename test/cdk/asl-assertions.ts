import assert from 'node:assert/strict';
import {
  allStates,
  LAMBDA_SERVICE_ERRORS,
  retriedLambdaServiceErrors,
  taskTokenStates,
  type AslMachine,
  type AslState,
} from '../../cdk/lib/asl.js';

/**
 * Assertions on Amazon States Language definitions, for any test that has a
 * definition in hand: a file from statemachines/ or the DefinitionString of a
 * synthesized template after substitution.
 */

export function stateNamed(machine: AslMachine, name: string): AslState {
  const state = allStates(machine).get(name);
  assert.ok(state, `the definition has no state named ${name}; it has ${[...allStates(machine).keys()].join(', ')}`);
  return state;
}

/**
 * A step that changes vendor state must not be re-run by Step Functions when
 * Lambda itself fails: the click may already have happened.
 */
export function assertNoLambdaServiceRetry(machine: AslMachine, stateName: string): void {
  const retried = retriedLambdaServiceErrors(stateNamed(machine, stateName));
  assert.deepEqual(
    retried,
    [],
    `${stateName} retries ${retried.join(', ')} (directly or via States.ALL / States.TaskFailed); a write step must not be retried`,
  );
}

/** Idempotent steps should ride out Lambda's own transient failures. */
export function assertRetriesLambdaServiceErrors(machine: AslMachine, stateName: string): void {
  const retried = retriedLambdaServiceErrors(stateNamed(machine, stateName));
  assert.deepEqual(retried, [...LAMBDA_SERVICE_ERRORS].sort(), `${stateName} should retry every Lambda service error`);
}

/** Every .waitForTaskToken state has a timeout, so an unanswered approval cannot wait for a year. */
export function assertTaskTokenWaitsTimeOut(machine: AslMachine): void {
  const waits = taskTokenStates(machine);
  assert.ok(waits.length > 0, 'expected at least one .waitForTaskToken state');
  for (const [name, state] of waits) {
    assert.ok(
      state.TimeoutSeconds !== undefined || state.TimeoutSecondsPath !== undefined,
      `${name} waits for a task token without TimeoutSeconds or TimeoutSecondsPath`,
    );
  }
}
