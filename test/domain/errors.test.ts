import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AmbiguousOutcomeError,
  InputRejectedError,
  PaperclipError,
  ReadFailedError,
  SessionLostError,
  TASK_FAILURES,
  WORKFLOW_ERROR_NAMES,
  WORKFLOW_ERRORS,
  WriteNotCommittedError,
} from '../../src/domain/errors.js';

/** The Lambda errors Step Functions surfaces for a Lambda task (the service's, and the runtime's timeout). */
const AWS_LAMBDA_ERROR_NAMES = new Set([
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.Unknown',
  'Sandbox.Timedout',
]);

/** Every ErrorEquals name in a state machine definition, at any depth (Map item processors included). */
function errorEqualsNames(node: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) for (const child of node) errorEqualsNames(child, into);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'ErrorEquals') for (const name of value as string[]) into.add(name);
      else errorEqualsNames(value, into);
    }
  }
  return into;
}

test('every error name the workflows catch or retry is one the error model defines', () => {
  const dir = 'statemachines';
  const files = readdirSync(dir).filter((f) => f.endsWith('.asl.json'));
  assert.ok(files.length > 0, 'no state machine definitions found');
  const caught = new Set<string>();
  for (const file of files) errorEqualsNames(JSON.parse(readFileSync(join(dir, file), 'utf8')), caught);
  // States.* are Step Functions' own; Lambda.*, Sandbox.* and StepFunctions.* are the AWS service integrations' errors,
  // each spelled as AWS raises it (a misspelt name in ErrorEquals matches nothing and fails silently).
  const aws = [...caught].filter((name) => /^(Lambda|Sandbox)\./.test(name));
  const unknownAws = aws.filter((name) => !AWS_LAMBDA_ERROR_NAMES.has(name));
  assert.deepEqual(unknownAws, [], `not an error Lambda or Step Functions raises: ${unknownAws.join(', ')}`);
  const ours = [...caught].filter((name) => !/^(States|Lambda|Sandbox|StepFunctions)\./.test(name));
  assert.ok(ours.length > 0, 'the workflows catch no error of their own: the check would prove nothing');
  const undefinedNames = ours.filter((name) => !WORKFLOW_ERROR_NAMES.has(name));
  assert.deepEqual(undefinedNames, [], `caught in ErrorEquals but defined nowhere in src/domain/errors.ts: ${undefinedNames.join(', ')}`);
  assert.ok(WORKFLOW_ERROR_NAMES.has(TASK_FAILURES.approvalRejected));
});

test('each error class is a real subclass whose instances carry the workflow error name', () => {
  const seen = new Set<string>();
  for (const ErrorClass of WORKFLOW_ERRORS) {
    const error =
      ErrorClass === InputRejectedError
        ? new InputRejectedError('bad', 'task.billNo')
        : new (ErrorClass as typeof SessionLostError)('failed');
    assert.ok(error instanceof ErrorClass);
    assert.ok(error instanceof PaperclipError);
    assert.ok(error instanceof Error);
    assert.equal(error.name, ErrorClass.errorName, 'the name Step Functions matches is the one the class declares');
    assert.match(String(error.stack), new RegExp(`^${ErrorClass.errorName}: `), 'the stack names the error too');
    assert.ok(!seen.has(error.name), `${error.name} is defined twice`);
    seen.add(error.name);
  }
  assert.ok(!(new SessionLostError('x') instanceof ReadFailedError), 'sibling classes do not match each other');
  assert.equal(new InputRejectedError('bad', 'task.billNo').details['field'], 'task.billNo');
  assert.equal(new InputRejectedError('bad', 'task.billNo').field, 'task.billNo');
});

test('a wrapped error keeps the error it explains as its cause', () => {
  const timeout = new Error('locator.click: Timeout 5000ms exceeded');
  const wrapped = new AmbiguousOutcomeError(`write may have landed: ${timeout.message}`, {}, { cause: timeout });
  assert.equal(wrapped.cause, timeout);
  assert.equal(new WriteNotCommittedError('refused', { stage: 'edit' }, { cause: 'plain' }).cause, 'plain');
  assert.equal(new ReadFailedError('no cause').cause, undefined);
  assert.equal(new InputRejectedError('bad', 'requestedBy', {}, { cause: timeout }).cause, timeout);
});
