import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { defineHandler } from '../../src/app/handler-kit.js';
import { InputRejectedError } from '../../src/domain/errors.js';
import { handler as snapshotHandler } from '../../lambdas/snapshot.js';

/**
 * The handlers log the Powertools way: one JSON object per line, each line of
 * an invocation carrying its step, tenant, idempotency key and execution.
 * These invocations need no stack: the refused event never reaches a store,
 * and the kit-level handler touches none.
 */

const key = 'k-0123456789abcdef0123456789abcdef01234567';
const execution = 'arn:aws:states:us-east-1:000000000000:execution:paperclip-guarded-write:k-0123';

/** The JSON log lines written to stdout and stderr while `work` runs. */
async function logLines(work: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const written: string[] = [];
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((stream) => stream.write);
  streams.forEach((stream, i) => {
    // Only the logger's JSON lines are taken; anything else (the test runner reports on stdout) passes through.
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (text.startsWith('{"level"')) {
        written.push(text);
        return true;
      }
      return (originals[i] as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  });
  try {
    await work().catch(() => undefined);
  } finally {
    streams.forEach((stream, i) => {
      stream.write = originals[i]!;
    });
  }
  return written
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('a refused event is logged as one structured line with the tenant, key and execution of the item', async () => {
  // A Snapshot event whose item lacks its bill number: refused at the boundary, before any store is called.
  const event = {
    item: { key, tenant: 'acme', taskId: 'T-1' },
    claim: { decision: 'proceed', claim: { owner: execution, version: 1 } },
  };
  let thrown: unknown;
  const lines = await logLines(() => snapshotHandler(event, { awsRequestId: 'req-1' }).catch((error: unknown) => (thrown = error)));
  assert.ok(thrown instanceof InputRejectedError, 'the handler still throws the workflow error');
  const line = lines.find((l) => l['step'] === 'snapshot');
  assert.ok(line, `no structured line for the snapshot step in ${JSON.stringify(lines)}`);
  assert.equal(line['level'], 'WARN');
  assert.equal(line['tenant'], 'acme');
  assert.equal(line['idempotencyKey'], key);
  assert.equal(line['execution'], execution);
  assert.equal(line['requestId'], 'req-1');
  assert.match(String(line['message']), /snapshot failed: InputRejectedError/);
});

test('a finished step logs one INFO line with its correlation keys; lines logged inside the step carry them too', async () => {
  const handler = defineHandler(
    'probe',
    z.object({ item: z.object({ key: z.string(), tenant: z.string() }), executionArn: z.string() }),
    async () => {
      const { log } = await import('../../src/observability/telemetry.js');
      log().warn('inside the step');
      return 'ok';
    },
  );
  const lines = await logLines(() => handler({ item: { key, tenant: 'globex' }, executionArn: execution }));
  const inside = lines.find((l) => l['message'] === 'inside the step');
  const done = lines.find((l) => l['message'] === 'probe done');
  for (const line of [inside, done]) {
    assert.ok(line, `missing line in ${JSON.stringify(lines)}`);
    assert.equal(line['tenant'], 'globex');
    assert.equal(line['idempotencyKey'], key);
    assert.equal(line['execution'], execution);
    assert.equal(line['step'], 'probe');
  }
  assert.equal(done!['level'], 'INFO');
});

test('no console logging in Lambda code paths: lambdas/ and the modules they run log through the Powertools logger', () => {
  const roots = [
    'lambdas',
    'src/app',
    'src/composition',
    'src/observability',
    'src/adapters',
    'src/browser',
    'src/evidence',
    'src/approval-server',
    'src/domain',
    'src/report',
  ];
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && path !== join('src', 'approval-server', 'local-server.ts')) {
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/\bconsole\.(log|info|warn|error|debug)\(/.test(line)) offenders.push(`${path}:${i + 1}`);
          });
      }
    }
  };
  roots.forEach(walk);
  assert.deepEqual(offenders, [], 'log with log() from src/observability/telemetry.ts instead');
});
