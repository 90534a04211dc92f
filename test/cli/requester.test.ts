import { test } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { cliRequester } from '../../src/cli/requester.js';
import type { PaperclipConfig } from '../../src/config/schema.js';

/** The CLI names the requester from the config or the OS user; a flag may override it only where the config allows. */
const configWith = (requesters: Partial<PaperclipConfig['requesters']>) =>
  ({ requesters: { allow_requested_by_flag: false, ...requesters } }) as PaperclipConfig;

test('the configured operator, else the OS user; --requested-by is refused unless the config allows it', () => {
  assert.equal(cliRequester(configWith({}), undefined, 'run'), `operator:${userInfo().username}`);
  assert.equal(cliRequester(configWith({ operator: 'alice@acme.example' }), undefined, 'run'), 'alice@acme.example');
  assert.throws(
    () => cliRequester(configWith({ operator: 'alice@acme.example' }), 'finance.lead@acme.example', 'compensate'),
    /--requested-by: the requester is the configured operator .*allow_requested_by_flag: true/,
  );
  assert.equal(cliRequester(configWith({ allow_requested_by_flag: true }), 'ops@acme.example', 'run'), 'ops@acme.example');
});
