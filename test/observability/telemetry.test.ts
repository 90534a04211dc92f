import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tracingEnabled } from '../../src/observability/telemetry.js';

const run = promisify(execFile);

/**
 * Builds the AWS clients in a fresh Node process with the given environment and reports whether the X-Ray SDK
 * was loaded (its context namespace registers itself on `process.namespaces`) and whether the S3 client was
 * captured (a captured client carries the X-Ray middleware).
 */
async function clientsIn(env: Record<string, string>): Promise<{ xray: boolean; captured: boolean }> {
  const script = `
    const { createAwsClients } = await import('./src/adapters/aws-clients.ts');
    const clients = createAwsClients('us-east-1', { s3: 'http://127.0.0.1:9' });
    const names = clients.s3.middlewareStack.identify().join(' ');
    console.log(JSON.stringify({ xray: 'AWSXRay' in (process.namespaces ?? {}), captured: /xray/i.test(names) }));`;
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !['AWS_EXECUTION_ENV', 'AWS_SAM_LOCAL', 'POWERTOOLS_TRACE_ENABLED'].includes(name)),
  );
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...clean, ...env },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { xray: boolean; captured: boolean };
}

test('outside Lambda the X-Ray SDK is never loaded, so its process-wide async hook does not tax every promise', async () => {
  assert.deepEqual(await clientsIn({}), { xray: false, captured: false });
});

test('in Lambda with tracing on, every AWS client is captured by the tracer', async () => {
  assert.deepEqual(await clientsIn({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'true' }), {
    xray: true,
    captured: true,
  });
});

test('tracing follows the Powertools rule: Lambda only, not SAM local, not switched off', () => {
  assert.equal(tracingEnabled({}), false);
  assert.equal(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' }), true);
  assert.equal(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'FALSE' }), false);
  assert.equal(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_SAM_LOCAL: 'true' }), false);
});
