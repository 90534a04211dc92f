import assert from 'node:assert/strict';
import {
  allStates,
  LAMBDA_SERVICE_ERRORS,
  retriedLambdaServiceErrors,
  taskTokenStates,
  type AslMachine,
  type AslState,
} from '../../src/contracts/asl.js';

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

/**
 * Task states that invoke a Lambda function: the lambda:invoke integration, or a Resource that is no
 * `arn:aws:states:::` integration at all (a function ARN, its substitution variable, or what a test makes of it).
 */
export function lambdaTaskStates(machine: AslMachine): Array<[string, AslState]> {
  const invokesLambda = (resource: string) =>
    resource.startsWith('arn:aws:states:::lambda:invoke') || (resource !== '' && !resource.startsWith('arn:aws:states:::'));
  return [...allStates(machine)].filter(([, state]) => state.Type === 'Task' && invokesLambda(state.Resource ?? ''));
}

type Retrier = NonNullable<AslState['Retry']>[number] & { BackoffRate?: number; JitterStrategy?: string; MaxDelaySeconds?: number };

/**
 * A throttle or a Lambda service error is the account's weather, not the step's failure: every Lambda
 * task must ride it out with backoff and full jitter (so a burst of retries does not throttle again in step).
 * `throttleOnly` states (the write) retry only Lambda.TooManyRequestsException, which Lambda raises before
 * the function runs; nothing that could mean the function ran.
 */
export function assertEveryLambdaTaskRetriesServiceErrors(machine: AslMachine, throttleOnly: readonly string[] = []): void {
  const tasks = lambdaTaskStates(machine);
  assert.ok(tasks.length > 0, 'the definition has no Lambda task state: the check would prove nothing');
  for (const [name, state] of tasks) {
    const expected = throttleOnly.includes(name) ? ['Lambda.TooManyRequestsException'] : [...LAMBDA_SERVICE_ERRORS].sort();
    assert.deepEqual(retriedLambdaServiceErrors(state), expected, `${name} must retry exactly ${expected.join(', ')}`);
    for (const error of expected) {
      const retrier = (state.Retry as Retrier[]).find((r) => r.ErrorEquals.includes(error))!;
      assert.ok((retrier.MaxAttempts ?? 3) >= 3, `${name}: ${error} retried at least 3 times`);
      assert.ok((retrier.BackoffRate ?? 2) > 1, `${name}: ${error} retried with backoff`);
      assert.equal(retrier.JitterStrategy, 'FULL', `${name}: ${error} retried with full jitter`);
    }
  }
}

/** The states whose Retry would re-run the function after a Sandbox.Timedout (directly or via a wildcard). */
export function statesRetryingTimeouts(machine: AslMachine): string[] {
  return lambdaTaskStates(machine)
    .filter(([, state]) =>
      (state.Retry ?? []).some(
        (r) => (r.MaxAttempts ?? 3) > 0 && r.ErrorEquals.some((e) => ['Sandbox.Timedout', 'States.ALL', 'States.TaskFailed'].includes(e)),
      ),
    )
    .map(([name]) => name)
    .sort();
}
