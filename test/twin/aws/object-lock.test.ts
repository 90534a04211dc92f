import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { awsClientConfig } from '../../../twin/aws/aws-config.js';
import { startLocalS3, type LocalS3 } from '../../../twin/aws/s3.js';
import { awsError, temporaryFolder } from './helpers.js';

// Object Lock as S3 keeps it, through the SDK against the local S3 (twin/aws/s3-object-lock.ts).
const data = temporaryFolder('object-lock');
const LOCKED = 'locked-evidence';
const PLAIN = 'working';
let s3: LocalS3;
let client: S3Client;

const sha256 = (body: string) => createHash('sha256').update(body).digest('base64');
const put = (key: string, body: string, bucket = LOCKED) =>
  client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ChecksumSHA256: sha256(body) }));
const text = async (key: string, versionId?: string) => {
  const got = await client.send(new GetObjectCommand({ Bucket: LOCKED, Key: key, ...(versionId ? { VersionId: versionId } : {}) }));
  return { body: await got.Body!.transformToString(), versionId: got.VersionId };
};
const headers = (error: unknown) => (error as { $response?: { headers?: Record<string, string> } }).$response?.headers ?? {};

async function start(): Promise<void> {
  s3 = await startLocalS3({
    directory: data.path,
    buckets: [PLAIN],
    lockedBuckets: [{ name: LOCKED, defaultRetention: { mode: 'COMPLIANCE', days: 400 } }],
  });
  client = new S3Client(awsClientConfig(s3.endpoint));
}

before(start);
after(async () => {
  client.destroy();
  await s3.stop();
  data.remove();
});

test('a PUT into a bucket with default retention needs Content-MD5 or an x-amz-checksum header, as S3 requires', async () => {
  const refused = await awsError(client.send(new PutObjectCommand({ Bucket: LOCKED, Key: 'runs/items.json', Body: '[]' })));
  assert.equal(refused.name, 'InvalidRequest');
  assert.equal(refused.$metadata?.httpStatusCode, 400);
  assert.match(refused.message, /Content-MD5 OR x-amz-checksum- HTTP header is required/);
  const listed = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'runs/' }));
  assert.equal(listed.Versions, undefined, 'nothing stored');

  const md5 = createHash('md5').update('[]').digest('base64');
  const withMd5 = await client.send(new PutObjectCommand({ Bucket: LOCKED, Key: 'md5.json', Body: '[]', ContentMD5: md5 }));
  assert.ok(withMd5.VersionId);
  const withSha = await put('sha.json', '{}');
  assert.ok(withSha.VersionId);
  // A bucket without Object Lock takes a PUT without a checksum, as S3 does.
  await client.send(new PutObjectCommand({ Bucket: PLAIN, Key: 'runs/items.json', Body: '[]' }));
});

test('a PUT of an existing key adds a version; every version stays readable by its id', async () => {
  const first = await put('evidence/acme/T-1/seal.json', 'first');
  const second = await put('evidence/acme/T-1/seal.json', 'second');
  assert.notEqual(first.VersionId, second.VersionId);
  assert.deepEqual(await text('evidence/acme/T-1/seal.json'), { body: 'second', versionId: second.VersionId });
  assert.deepEqual(await text('evidence/acme/T-1/seal.json', first.VersionId), { body: 'first', versionId: first.VersionId });
  const head = await client.send(new HeadObjectCommand({ Bucket: LOCKED, Key: 'evidence/acme/T-1/seal.json', VersionId: first.VersionId }));
  assert.equal(head.ContentLength, 5);
  assert.equal(head.ObjectLockMode, 'COMPLIANCE');

  const listed = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'evidence/acme/T-1/' }));
  assert.deepEqual(
    listed.Versions?.map((v) => [v.Key, v.VersionId, v.IsLatest, v.Size]),
    [
      ['evidence/acme/T-1/seal.json', second.VersionId, true, 6],
      ['evidence/acme/T-1/seal.json', first.VersionId, false, 5],
    ],
  );
  const missing = await awsError(
    client.send(new GetObjectCommand({ Bucket: LOCKED, Key: 'evidence/acme/T-1/seal.json', VersionId: 'nope' })),
  );
  assert.equal(missing.name, 'NoSuchVersion');
});

test('a DELETE without a version id adds a delete marker: GET is 404 NoSuchKey with x-amz-delete-marker, the versions stay', async () => {
  const kept = await put('anchors/acme/digests/2026-12-01.json', 'digest');
  const deleted = await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'anchors/acme/digests/2026-12-01.json' }));
  assert.equal(deleted.DeleteMarker, true);
  assert.ok(deleted.VersionId);

  const gone = await awsError(client.send(new GetObjectCommand({ Bucket: LOCKED, Key: 'anchors/acme/digests/2026-12-01.json' })));
  assert.equal(gone.name, 'NoSuchKey');
  assert.equal(headers(gone)['x-amz-delete-marker'], 'true');
  assert.equal(headers(gone)['x-amz-version-id'], deleted.VersionId);
  const current = await client.send(new ListObjectsV2Command({ Bucket: LOCKED, Prefix: 'anchors/acme/digests/' }));
  assert.equal(current.KeyCount, 0, 'ListObjectsV2 no longer sees it');

  const listed = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'anchors/acme/digests/' }));
  assert.deepEqual(
    listed.DeleteMarkers?.map((m) => [m.VersionId, m.IsLatest]),
    [[deleted.VersionId, true]],
  );
  assert.deepEqual(
    listed.Versions?.map((v) => [v.VersionId, v.IsLatest]),
    [[kept.VersionId, false]],
  );
  assert.equal((await text('anchors/acme/digests/2026-12-01.json', kept.VersionId)).body, 'digest');
  const marker = await awsError(
    client.send(new GetObjectCommand({ Bucket: LOCKED, Key: 'anchors/acme/digests/2026-12-01.json', VersionId: deleted.VersionId })),
  );
  assert.equal(marker.$metadata?.httpStatusCode, 405);

  // A delete marker has no retention: removing it brings the object back, as on S3.
  await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'anchors/acme/digests/2026-12-01.json', VersionId: deleted.VersionId }));
  assert.deepEqual(await text('anchors/acme/digests/2026-12-01.json'), { body: 'digest', versionId: kept.VersionId });
});

test('a version under COMPLIANCE retention cannot be deleted: AccessDenied, and it stays', async () => {
  const version = await put('anchors/acme/2026-12-01/batch:acme:T-1/1.json', 'anchor');
  const denied = await awsError(
    client.send(
      new DeleteObjectCommand({ Bucket: LOCKED, Key: 'anchors/acme/2026-12-01/batch:acme:T-1/1.json', VersionId: version.VersionId }),
    ),
  );
  assert.equal(denied.name, 'AccessDenied');
  assert.equal(denied.$metadata?.httpStatusCode, 403);
  // Nor can a multi-object delete remove it (s3rver's own would remove the object outright).
  const bulk = await awsError(
    client.send(
      new DeleteObjectsCommand({ Bucket: LOCKED, Delete: { Objects: [{ Key: 'anchors/acme/2026-12-01/batch:acme:T-1/1.json' }] } }),
    ),
  );
  assert.equal(bulk.name, 'NotImplemented');
  assert.equal((await text('anchors/acme/2026-12-01/batch:acme:T-1/1.json')).body, 'anchor');
  assert.equal((await text('anchors/acme/2026-12-01/batch:acme:T-1/1.json', version.VersionId)).body, 'anchor');

  const retention = await client.send(
    new GetObjectRetentionCommand({ Bucket: LOCKED, Key: 'anchors/acme/2026-12-01/batch:acme:T-1/1.json', VersionId: version.VersionId }),
  );
  assert.equal(retention.Retention?.Mode, 'COMPLIANCE');
  const days = (retention.Retention!.RetainUntilDate!.getTime() - Date.now()) / 86_400_000;
  assert.ok(days > 399 && days <= 400, `retained ${days} days`);
  const config = await client.send(new GetObjectLockConfigurationCommand({ Bucket: LOCKED }));
  assert.deepEqual(config.ObjectLockConfiguration, {
    ObjectLockEnabled: 'Enabled',
    Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 400 } },
  });
});

test('ListObjectVersions pages by key and version id markers', async () => {
  for (const n of [1, 2, 3]) await put(`paged/k${n}`, `a${n}`);
  await put('paged/k2', 'b2');
  const seen: Array<[string, boolean]> = [];
  let pages = 0;
  let markers: { KeyMarker?: string; VersionIdMarker?: string } = {};
  for (;;) {
    const page = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'paged/', MaxKeys: 3, ...markers }));
    pages += 1;
    for (const v of page.Versions ?? []) seen.push([v.Key!, v.IsLatest!]);
    if (!page.IsTruncated) break;
    markers = { KeyMarker: page.NextKeyMarker!, VersionIdMarker: page.NextVersionIdMarker! };
  }
  assert.equal(pages, 2);
  assert.deepEqual(seen, [
    ['paged/k1', true],
    ['paged/k2', true],
    ['paged/k2', false],
    ['paged/k3', true],
  ]);
});

test('a bucket created with Object Lock through the API gets its default retention from PutObjectLockConfiguration', async () => {
  await client.send(new CreateBucketCommand({ Bucket: 'made-locked', ObjectLockEnabledForBucket: true }));
  const before = await client.send(new PutObjectCommand({ Bucket: 'made-locked', Key: 'a', Body: 'x' }));
  assert.ok(before.VersionId, 'versioned, no default retention yet: no checksum needed');
  await client.send(
    new PutObjectLockConfigurationCommand({
      Bucket: 'made-locked',
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } } },
    }),
  );
  const refused = await awsError(client.send(new PutObjectCommand({ Bucket: 'made-locked', Key: 'b', Body: 'x' })));
  assert.equal(refused.name, 'InvalidRequest');
});

test('versions and delete markers survive a restart on the same folder', async () => {
  const first = await put('restart/seal.json', 'one');
  await put('restart/seal.json', 'two');
  const marker = await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'restart/seal.json' }));
  client.destroy();
  await s3.stop();
  await start();

  const listed = await client.send(new ListObjectVersionsCommand({ Bucket: LOCKED, Prefix: 'restart/' }));
  assert.equal(listed.Versions?.length, 2);
  assert.deepEqual(
    listed.DeleteMarkers?.map((m) => m.VersionId),
    [marker.VersionId],
  );
  assert.equal((await text('restart/seal.json', first.VersionId)).body, 'one');
  const denied = await awsError(
    client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: 'restart/seal.json', VersionId: first.VersionId })),
  );
  assert.equal(denied.name, 'AccessDenied');
  const refused = await awsError(client.send(new PutObjectCommand({ Bucket: LOCKED, Key: 'restart/x', Body: 'x' })));
  assert.equal(refused.name, 'InvalidRequest', 'the default retention is kept too');
});
