import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startLocalS3, type LocalS3 } from '../../twin/aws/s3.js';
import { awsClientConfig } from '../../twin/aws/aws-config.js';
import { MapRunResults } from '../../src/adapters/s3/map-run-results.js';
import type { MapRunItemResult } from '../../src/app/ports/map-runs.js';

// The map run's ResultWriter files as Summarize reads them, from a local S3.

const BUCKET = 'results-bucket';
let s3server: LocalS3;
let s3: S3Client;
let mapRuns: MapRunResults;

before(async () => {
  s3server = await startLocalS3({ buckets: [BUCKET] });
  s3 = new S3Client(awsClientConfig(s3server.endpoint, 'us-east-1'));
  mapRuns = new MapRunResults(s3);
});

after(async () => {
  s3.destroy();
  await s3server.stop();
});

const put = (key: string, body: string) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

async function writeRun(folder: string, lines: { SUCCEEDED?: unknown[]; FAILED?: unknown[] }) {
  const files: Record<string, Array<{ Key: string }>> = { SUCCEEDED: [], FAILED: [], PENDING: [] };
  for (const [status, entries] of Object.entries(lines)) {
    const key = `${folder}/${status}_0.json`;
    await put(key, `${entries.map((e) => JSON.stringify(e)).join('\n')}\n`);
    files[status]!.push({ Key: key });
  }
  await put(`${folder}/manifest.json`, JSON.stringify({ DestinationBucket: BUCKET, MapRunArn: 'arn:run', ResultFiles: files }));
  return { MapRunArn: 'arn:run', ResultWriterDetails: { Bucket: BUCKET, Key: `${folder}/manifest.json` } };
}

async function all(output: Parameters<MapRunResults['read']>[0]): Promise<MapRunItemResult[]> {
  const out: MapRunItemResult[] = [];
  for await (const r of mapRuns.read(output)) out.push(r);
  return out;
}

const input = (key: string, billNo: string) => ({ key, task: { billNo } });
const output = (key: string, billNo: string) => ({ outcome: 'done', key, billNo });

test('result lines whose Input and Output are JSON strings, or the JSON itself, are read alike', async () => {
  const run = await writeRun('runs/t/strings-and-objects/results/run-1', {
    SUCCEEDED: [
      { ExecutionArn: 'arn:1', Status: 'SUCCEEDED', Input: JSON.stringify(input('k1', 'B1')), Output: JSON.stringify(output('k1', 'B1')) },
      { ExecutionArn: 'arn:2', Status: 'SUCCEEDED', Input: input('k2', 'B2'), Output: output('k2', 'B2') },
    ],
    FAILED: [{ ExecutionArn: 'arn:3', Status: 'FAILED', Input: input('k3', 'B3'), Error: 'States.Runtime' }],
  });
  const results = await all(run);
  assert.deepEqual(
    results.map((r) => [r.outcome, r.key, r.billNo]),
    [
      ['done', 'k1', 'B1'],
      ['done', 'k2', 'B2'],
      ['error', 'k3', 'B3'],
    ],
  );
  assert.equal(results[2]!.reason, 'States.Runtime', 'a failure without a Cause still has a reason');
});

test("a failed map run's results are found under the results prefix; none when it wrote nothing", async () => {
  const prefix = 'runs/t/failed-run/exec-1/results';
  const written = await writeRun(`${prefix}/0b6c-map-run`, { SUCCEEDED: [{ Status: 'SUCCEEDED', Output: output('k9', 'B9') }] });
  const found = await mapRuns.find({ bucket: BUCKET, prefix });
  assert.equal(found?.ResultWriterDetails.Key, written.ResultWriterDetails.Key);
  assert.deepEqual(
    (await all(found!)).map((r) => r.key),
    ['k9'],
  );
  assert.equal(await mapRuns.find({ bucket: BUCKET, prefix: 'runs/t/failed-run/exec-2/results' }), undefined);
});
