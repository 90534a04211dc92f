import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STATE_MACHINES, WORKFLOW_FUNCTIONS, functionArnVariable, stateMachineArnVariable } from '../../src/contracts/functions.js';
import {
  allStates,
  applySubstitutions,
  readStateMachineFile,
  retriedLambdaServiceErrors,
  substitutionVariables,
  type AslMachine,
  type AslState,
} from '../../src/contracts/asl.js';
import { PROJECT_ROOT } from '../../cdk/lib/app.js';
import { ungrantedTaskResources } from '../../cdk/lib/workflows.js';
import {
  assertEveryLambdaTaskRetriesServiceErrors,
  assertNoLambdaServiceRetry,
  assertRetriesLambdaServiceErrors,
  assertTaskTokenWaitsTimeOut,
  lambdaTaskStates,
  statesRetryingTimeouts,
} from './asl-assertions.js';

const read = (file: string) => readStateMachineFile(join(PROJECT_ROOT, 'statemachines', file));

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

  it('retry the write only on a throttle (raised before the function runs), and every other Lambda task on every Lambda service error', () => {
    const guarded = JSON.parse(read('guarded-write.asl.json')) as AslMachine;
    assertEveryLambdaTaskRetriesServiceErrors(guarded, ['BrowserWrite']);
    for (const step of ['ValidateRoute', 'Claim', 'Snapshot', 'Readback', 'RequestApproval', 'ApprovalRejected', 'ApprovalExpired']) {
      assertRetriesLambdaServiceErrors(guarded, step);
    }
    for (const step of ['Compensate', 'RecordCompensation', 'Complete', 'Takeover', 'Stale', 'Blocked'])
      assertRetriesLambdaServiceErrors(guarded, step);
    const batch = JSON.parse(read('batch.asl.json')) as AslMachine;
    assertEveryLambdaTaskRetriesServiceErrors(batch);
    assert.deepEqual(
      lambdaTaskStates(batch).map(([name]) => name),
      ['ReadList', 'ReadFailed', 'Summarize', 'SummarizeFailed'],
    );
  });

  it('retry a Sandbox.Timedout only where running the function again is safe', () => {
    // A timeout means the function may have run to its end. Retried only where a second run changes nothing a first
    // one did: reads (ValidateRoute, Snapshot, Readback, ReadList), the claim (the same execution re-entering keeps it),
    // the takeover (a repeat finds its own TAKEOVER claim and queue entry), and a stale or blocked close (rewrites nothing sealed).
    // Not BrowserWrite (the click may have happened: readback decides), not RequestApproval (a second approval mail),
    // not Complete/ApprovalRejected/ApprovalExpired (the claim has moved: a repeat is fenced), not the compensation
    // steps (a second entry in the audit trail), not Summarize (a timeout there repeats; SummarizeFailed records it).
    const guarded = JSON.parse(read('guarded-write.asl.json')) as AslMachine;
    assert.deepEqual(statesRetryingTimeouts(guarded), ['Blocked', 'Claim', 'Readback', 'Snapshot', 'Stale', 'Takeover', 'ValidateRoute']);
    const batch = JSON.parse(read('batch.asl.json')) as AslMachine;
    assert.deepEqual(statesRetryingTimeouts(batch), ['ReadList']);
  });

  it('a task state without the Lambda service-error retrier fails the check', () => {
    const guarded = JSON.parse(read('guarded-write.asl.json')) as AslMachine;
    delete guarded.States['RecordCompensation']!.Retry;
    assert.throws(() => assertEveryLambdaTaskRetriesServiceErrors(guarded, ['BrowserWrite']), /RecordCompensation must retry/);
    const write = JSON.parse(read('guarded-write.asl.json')) as AslMachine;
    write.States['BrowserWrite']!.Retry!.push({ ErrorEquals: ['Lambda.ServiceException'], MaxAttempts: 2 });
    assert.throws(
      () => assertEveryLambdaTaskRetriesServiceErrors(write, ['BrowserWrite']),
      /BrowserWrite must retry exactly Lambda.TooManyRequestsException/,
    );
  });

  it('use only task integrations the workflow roles are granted', () => {
    for (const machine of STATE_MACHINES) assert.deepEqual(ungrantedTaskResources(read(machine.file)), [], machine.file);
    const foreign = JSON.stringify({
      StartAt: 'Put',
      States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', End: true } },
    });
    assert.deepEqual(ungrantedTaskResources(foreign), ['Put: arn:aws:states:::dynamodb:putItem']);
  });

  it("read an error's Cause only where a Choice proved it is there, or a Pass put it there", () => {
    for (const machine of STATE_MACHINES) {
      const problems = unguardedCauseReads(JSON.parse(read(machine.file)) as AslMachine);
      assert.deepEqual(problems, [], `${machine.file}: an error output may lack Cause, and a missing path is States.Runtime`);
    }
    const unguarded: AslMachine = {
      StartAt: 'T',
      States: {
        T: { Type: 'Task', Resource: 'arn', Catch: [{ ErrorEquals: ['States.ALL'], Next: 'P' }], End: true },
        P: { Type: 'Pass', Parameters: { 'reason.$': '$.failure.Cause' }, End: true },
      },
    };
    assert.deepEqual(unguardedCauseReads(unguarded), ['P reads $.failure.Cause, reached from T unguarded']);
  });

  it('bound every wait for a task token', () => {
    assertTaskTokenWaitsTimeOut(JSON.parse(read('guarded-write.asl.json')) as AslMachine);
  });
});

/**
 * States that read `$.<x>.Cause` although some way into them does not guarantee it: every state that
 * transitions there must be a Choice rule `{ Variable: $.<x>.Cause, IsPresent: true }` or a Pass that
 * sets `$.<x>` with a Cause.
 */
function unguardedCauseReads(machine: AslMachine): string[] {
  const states = allStates(machine);
  const problems: string[] = [];
  for (const [name, state] of states) {
    const reads = [...JSON.stringify(state.Parameters ?? {}).matchAll(/\$\.([A-Za-z]+)\.Cause/g)].map((m) => m[1]!);
    for (const field of new Set(reads)) {
      for (const [from, other] of states) {
        const choices = (other['Choices'] ?? []) as Array<{ Variable?: string; IsPresent?: boolean; Next: string }>;
        const guardedChoice = choices.some((c) => c.Next === name && c.Variable === `$.${field}.Cause` && c.IsPresent === true);
        const unguardedChoice = choices.some((c) => c.Next === name && !(c.Variable === `$.${field}.Cause` && c.IsPresent === true));
        const params = JSON.stringify((other as AslState).Parameters ?? {});
        const fillingPass =
          other.Type === 'Pass' && other['ResultPath'] === `$.${field}` && /"Cause(\.\$)?":/.test(params) && other['Next'] === name;
        const direct =
          (other['Next'] === name && !fillingPass) ||
          other['Default'] === name ||
          (other.Catch ?? []).some((c) => c.Next === name) ||
          unguardedChoice;
        if (direct && !guardedChoice) problems.push(`${name} reads $.${field}.Cause, reached from ${from} unguarded`);
      }
    }
  }
  return problems;
}
