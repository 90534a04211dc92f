import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { batchKey } from '../../src/app/ports/evidence.js';
import { GENESIS_HASH, sealEvent } from '../../src/domain/audit-chain.js';
import { anchorKey, anchorSealEvent, digestKey } from '../../src/evidence/anchors.js';
import { preservedVersions, verifyPreserved } from '../../src/evidence/preserved-versions.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { runPaperclipSource } from '../support/processes.js';

/**
 * `audit verify` reads what Object Lock preserves (src/evidence/preserved-versions.ts), through the
 * embedded stack's locked evidence bucket (twin/aws/s3-object-lock.ts): a later version or a delete
 * marker over an anchor, digest or seal is a finding naming both version ids, and the covered
 * version is the one verified.
 */
const TASK = 'T-evidence-versions';
const batch = { tenant: 'acme', taskId: TASK };

describe('audit verify reads object versions', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness();
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const run = await h.paperclip.runBatch({ taskId: TASK, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
  });
  after(async () => {
    await h?.stop();
  });

  /** A PUT as someone with bucket write access would make it: with the checksum the locked bucket requires. */
  async function overwrite(key: string, body: string): Promise<string> {
    const s = h.paperclip.services;
    const checksum = createHash('sha256').update(body).digest('base64');
    const put = await s.clients.s3.send(
      new PutObjectCommand({ Bucket: s.evidence.bucket, Key: key, Body: body, ChecksumSHA256: checksum }),
    );
    return put.VersionId!;
  }
  async function versionIds(key: string): Promise<string[]> {
    return ((await h.paperclip.services.evidence.versions(key)).get(key) ?? []).map((v) => v.versionId);
  }
  const short = (id: string) => id.slice(0, 16);

  test('an untouched batch verifies clean; its working files are in the working bucket, none in the locked one', async () => {
    const s = h.paperclip.services;
    assert.deepEqual((await verifyPreserved(s, { kind: 'batch', batch })).findings, []);
    const working = await s.working.list(`runs/acme/${TASK}/`);
    assert.ok(
      working.some((k) => k.endsWith('/items.json')),
      `${working}`,
    );
    assert.ok(
      working.some((k) => k.includes('/results/')),
      `${working}`,
    );
    assert.equal((await s.evidence.versions('runs/')).size, 0, 'nothing under runs/ in the evidence bucket');
  });

  test('a rewritten anchor is a finding naming both versions, and its first version is the one verified', async () => {
    const s = h.paperclip.services;
    const sealed = (await s.audit.events(`batch:acme:${TASK}`)).findLast((e) => e.type === 'sealed')!;
    const key = anchorKey('acme', sealed);
    const [first] = await versionIds(key);
    assert.ok(first, 'the seal is anchored');
    const original = JSON.parse((await s.evidence.get(key))!.toString());
    const later = await overwrite(key, `${JSON.stringify({ ...original, eventHash: 'f'.repeat(64) })}\n`);

    const result = await verifyPreserved(s, { kind: 'batch', batch });
    const named = result.findings.map((f) => f.detail).join('\n');
    const rewrite = result.findings.find((f) => f.object === key && f.kind === 'altered');
    assert.ok(rewrite, named);
    assert.ok(rewrite.detail.includes(short(first)) && rewrite.detail.includes(short(later)), rewrite.detail);
    assert.ok(!/differs from its anchor/.test(named), `the first anchor version, not the forged one, is checked:\n${named}`);
  });

  test("a deleted seal (a delete marker) and a seal written over the chain's are findings naming both versions", async () => {
    const s = h.paperclip.services;
    const key = batchKey(batch, 'seal.json');
    const [sealVersion] = await versionIds(key);
    const sealBody = (await s.evidence.get(key))!.toString();
    const marker = await s.clients.s3.send(new DeleteObjectCommand({ Bucket: s.evidence.bucket, Key: key }));
    assert.equal(marker.DeleteMarker, true);
    assert.equal(await s.evidence.get(key), undefined, 'a plain GET no longer sees it');

    let result = await verifyPreserved(s, { kind: 'batch', batch });
    let named = result.findings.map((f) => f.detail).join('\n');
    const deleted = result.findings.find((f) => f.object === key && f.kind === 'removed');
    assert.ok(deleted, named);
    assert.ok(deleted.detail.includes(short(marker.VersionId!)) && deleted.detail.includes(short(sealVersion!)), deleted.detail);
    assert.ok(!/seal\.json removed \(the batch chain recorded/.test(named), `the covered seal is still verified:\n${named}`);

    // A seal.json the batch chain does not record, written over the marker.
    const forged = JSON.parse(sealBody) as { sealHash: string };
    const forgedVersion = await overwrite(key, JSON.stringify({ ...forged, sealHash: 'e'.repeat(64) }));
    result = await verifyPreserved(s, { kind: 'batch', batch });
    named = result.findings.map((f) => f.detail).join('\n');
    const rewritten = result.findings.find((f) => f.object === key && f.kind === 'altered' && f.detail.includes(short(forgedVersion)));
    assert.ok(rewritten, named);
    assert.ok(rewritten.detail.includes(short(sealVersion!)), rewritten.detail);
    assert.ok(!/not recorded in chain/.test(named), `the seal the chain records is the one verified:\n${named}`);

    const cli = await runPaperclipSource(['audit', 'verify', '--batch', `acme/${TASK}`], {
      PAPERCLIP_DYNAMODB_ENDPOINT: h.paperclip.stack.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: h.paperclip.stack.endpoints.s3,
    });
    assert.equal(cli.code, 1, cli.stdout + cli.stderr);
    assert.match(cli.stdout, /REMOVED .*seal\.json deleted: delete marker/);
    assert.match(cli.stdout, /ALTERED .*seal\.json rewritten/);
  });

  test('a deleted daily digest is a finding naming the marker and the version it covers', async () => {
    const s = h.paperclip.services;
    const tenant = 'versions-digest';
    const chain = `batch:${tenant}:T-digest`;
    const e1 = sealEvent(
      chain,
      1,
      GENESIS_HASH,
      { type: 'sealed', actor: 'p', data: { sealHash: 'a'.repeat(64) } },
      '2026-01-01T10:00:00.000Z',
    );
    await anchorSealEvent(s, tenant, e1);
    await h.paperclip.writeDigests({ now: Date.parse('2026-01-03T12:00:00Z'), tenants: [tenant] });
    const key = digestKey(tenant, '2026-01-01');
    const [digest] = await versionIds(key);
    assert.ok(digest, 'the finished day was digested');
    const preservedFindings = async () => (await preservedVersions(s, { tenant })).findings;
    assert.deepEqual(await preservedFindings(), []);

    const marker = await s.clients.s3.send(new DeleteObjectCommand({ Bucket: s.evidence.bucket, Key: key }));
    const findings = await preservedFindings();
    const named = findings.map((f) => f.detail).join('\n');
    const deleted = findings.find((f) => f.object === key && f.kind === 'removed');
    assert.ok(deleted, named);
    assert.ok(deleted.detail.includes(short(marker.VersionId!)) && deleted.detail.includes(short(digest)), deleted.detail);
  });
});
