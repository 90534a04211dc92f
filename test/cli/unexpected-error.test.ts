import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unexpectedErrorLine } from '../../src/cli/unexpected-error.js';

function named(name: string, message: string, code?: string): Error {
  const error = new Error(message);
  error.name = name;
  if (code) (error as NodeJS.ErrnoException).code = code;
  return error;
}

test("a browser action's timeout is not reported as a store that did not answer", () => {
  const line = unexpectedErrorLine(
    'sitepack drill',
    named('TimeoutError', 'locator.click: Timeout 9896ms exceeded.\nCall log:\n  - waiting for getByRole(…)'),
  );
  assert.match(line, /^paperclip sitepack drill: a browser action timed out \(locator\.click: Timeout 9896ms exceeded\.\)/);
  assert.doesNotMatch(line, /store|data folder/);
  assert.match(line, /PAPERCLIP_DEBUG=1/);
});

test('a store that does not answer is still said so', () => {
  assert.match(
    unexpectedErrorLine('items', named('Error', 'connect ECONNREFUSED 127.0.0.1:8000', 'ECONNREFUSED')),
    /a store or service did not answer/,
  );
  assert.match(
    unexpectedErrorLine('items', named('TimeoutError', 'Connection timed out after 3000 ms')),
    /a store or service did not answer/,
  );
});
