import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { GENESIS_HASH, canonicalJson, sealEvent, type AuditEvent } from '../../src/domain/audit-chain.js';
import { batchKey } from '../../src/app/ports/evidence.js';
import { anchorKey, anchorSealEvent } from '../../src/evidence/anchors.js';
import { addDays, dayEnd, dayOf, digestKey } from '../../src/evidence/anchor-layout.js';
import { DailyDigest, digestSigningMessage, readDigest, verifyTenantDigests } from '../../src/evidence/digests.js';
import { DigestKeys } from '../../src/adapters/kms/digest-keys.js';
import { PaperclipConfig } from '../../src/config/schema.js';
import { computeSealHash, Seal } from '../../src/evidence/seal.js';
import { verifyAll, verifyBatch } from '../../src/evidence/verify.js';
import { useHarness } from '../support/embedded.js';
import { runPaperclipSource, type Finished } from '../support/processes.js';

/**
 * Daily digests as CloudTrail keeps them (docs/evidence.md, "Daily digests"): one signed digest per tenant for
 * every day from its first seal, quiet days included, written by the digest function alone (the only holder of
 * the local KMS's signer credential); verify knows which days must have one and checks every signature.
 */

const HOUR = 3600_000;

describe('daily digests', () => {
  const h = useHarness();

  const s = () => h.paperclip.services;
  const bodyOf = async (key: string) => (await s().evidence.get(key))!;
  const put = (key: string, body: string | Buffer) => s().evidence.put(key, body, 'application/json');
  const remove = (key: string) => s().clients.s3.send(new DeleteObjectCommand({ Bucket: s().evidence.bucket, Key: key }));

  /** Days in 2030: never over by the real clock, so the stack's own digest runs (at start, after a batch) leave them alone. */
  const tenant = 'digest-quiet';
  const at = (day: string) => `${day}T10:00:00.000Z`;
  const days = ['2030-01-01', '2030-01-02', '2030-01-03', '2030-01-04'];

  test('the sealing code cannot sign: the local KMS answers Sign only for the digest function', async () => {
    await assert.rejects(s().digestKeys.sign(Buffer.from('a forged digest')), /not authorized to perform kms:Sign|AccessDenied/);
    // The public half is for everyone.
    assert.equal((await s().digestKeys.publicKey()).asymmetricKeyType, 'ec');
  });

  test('on the enforcing twin, a sealing function cannot put a digest and the digest function cannot put evidence', async () => {
    const put = (key: string) => s().evidence.put(key, '{}', 'application/json');
    await assert.rejects(
      h.paperclip.iam.runAsFunction('complete', () => put(digestKey(tenant, '2026-01-01'))),
      (error: Error) => error.name === 'AccessDenied' && /complete/.test(error.message) && /s3:PutObject/.test(error.message),
    );
    // Nor through the tenant session it seals under (anchors/<tenant>/ yes, digests/ never).
    await assert.rejects(
      h.paperclip.iam.runAsFunction('complete', () =>
        s().forTenant({ tenant }).evidence.put(digestKey(tenant, '2026-01-01'), '{}', 'application/json'),
      ),
      (error: Error) => error.name === 'AccessDenied' && /assumed by function complete/.test(error.message),
    );
    await assert.rejects(
      h.paperclip.iam.runAsFunction('write-digests', () => put(`evidence/${tenant}/T-x/k/record.json`)),
      (error: Error) => error.name === 'AccessDenied' && /write-digests/.test(error.message),
    );
    assert.equal(await s().evidence.exists(digestKey(tenant, '2026-01-01')), false, 'nothing was written');
  });

  test('every day from the first seal has a signed digest, quiet days too, each naming the one before', async () => {
    const chain = `batch:${tenant}:T-quiet`;
    const first = sealEvent(chain, 1, GENESIS_HASH, { type: 'sealed', actor: 'p', data: { sealHash: 'a'.repeat(64) } }, at(days[0]!));
    await anchorSealEvent(s(), tenant, first);
    // Nothing is due before the day is over (an hour after midnight UTC).
    assert.deepEqual((await h.paperclip.writeDigests({ now: dayEnd(days[0]!) + HOUR / 2, tenants: [tenant] })).written, []);

    const now = dayEnd(days[3]!) + 2 * HOUR;
    const run = await h.paperclip.writeDigests({ now, tenants: [tenant] });
    assert.deepEqual(
      run.written,
      days.map((d) => digestKey(tenant, d)),
    );
    // Run again (the hourly schedule, a retry): nothing is written twice.
    assert.deepEqual((await h.paperclip.writeDigests({ now, tenants: [tenant] })).written, []);

    let previous: string | null = null;
    for (const day of days) {
      const read = await readDigest(s(), tenant, day);
      assert.equal(read.state, 'valid', `${day}: ${read.state === 'invalid' ? read.problem : ''}`);
      const digest = DailyDigest.parse(JSON.parse((await bodyOf(digestKey(tenant, day))).toString()));
      assert.equal(digest.anchors.length, day === days[0] ? 1 : 0, `${day}: a quiet day is digested with no anchors`);
      assert.equal(digest.previous?.key ?? null, previous);
      previous = digestKey(tenant, day);
    }
    const result = await verifyTenantDigests(s(), tenant, { now: now + 2 * HOUR });
    assert.deepEqual(result.findings, []);
  });

  test('deleting the latest digest is a finding; so is a gap, and a digest written again late', async () => {
    const latest = digestKey(tenant, days[3]!);
    const kept = await bodyOf(latest);
    const now = dayEnd(days[3]!) + 4 * HOUR;
    await remove(latest);
    const findings = (await verifyTenantDigests(s(), tenant, { now })).findings;
    assert.ok(
      findings.some((f) => f.kind === 'removed' && f.object === latest && /is missing/.test(f.detail)),
      findings.map((f) => f.detail).join('; '),
    );

    // The writer's next run writes the day again, from what the anchors say then: late, which verify names.
    const later = dayEnd(days[3]!) + 30 * HOUR;
    await h.paperclip.writeDigests({ now: later, tenants: [tenant] });
    const onAws = await verifyTenantDigests(s(), tenant, { now: later, late: 'finding' });
    assert.ok(
      onAws.findings.some((f) => f.object === latest && /after its day ended .*not on schedule/.test(f.detail)),
      onAws.findings.map((f) => f.detail).join('; '),
    );
    const local = await verifyTenantDigests(s(), tenant, { now: later, late: 'note' });
    assert.ok(local.notes.some((n) => n.includes(latest)));
    await remove(digestKey(tenant, addDays(days[3]!, 1)));
    await put(latest, kept);

    // A digest in the middle deleted: the days after it name a digest that is gone.
    const middle = digestKey(tenant, days[1]!);
    const middleBody = await bodyOf(middle);
    await remove(middle);
    const gap = (await verifyTenantDigests(s(), tenant, { now })).findings;
    assert.ok(gap.some((f) => f.kind === 'removed' && f.object === middle));
    await put(middle, middleBody);
    assert.deepEqual((await verifyTenantDigests(s(), tenant, { now })).findings, []);
  });

  test('a digest forged without the key, edited or re-signed with another key, is a finding', async () => {
    const key = digestKey(tenant, days[1]!);
    const original = await bodyOf(key);
    const now = dayEnd(days[3]!) + 4 * HOUR;
    const digest = DailyDigest.parse(JSON.parse(original.toString()));
    const forgedAnchor = {
      key: anchorKey(tenant, { chain: `batch:${tenant}:T-forged`, seq: 1, at: at(days[1]!) }),
      sha256: 'f'.repeat(64),
    };

    // Edited, its signature kept.
    await put(key, `${canonicalJson({ ...digest, anchors: [forgedAnchor] })}\n`);
    let findings = (await verifyTenantDigests(s(), tenant, { now })).findings;
    assert.ok(
      findings.some((f) => f.object === key && /signature does not verify with the digest key/.test(f.detail)),
      findings.map((f) => f.detail).join('; '),
    );

    // Re-signed, correctly, with a key of the forger's own.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const unsigned = { ...digest, anchors: [forgedAnchor] };
    const value = sign('sha256', digestSigningMessage(unsigned), { key: privateKey, dsaEncoding: 'der' }).toString('base64');
    await put(key, `${canonicalJson({ ...unsigned, signature: { ...digest.signature, value } })}\n`);
    findings = (await verifyTenantDigests(s(), tenant, { now })).findings;
    assert.ok(
      findings.some((f) => f.object === key && /signature does not verify with the digest key/.test(f.detail)),
      findings.map((f) => f.detail).join('; '),
    );
    // The next day's digest no longer links it either.
    assert.ok(findings.some((f) => f.object === digestKey(tenant, days[2]!) && /does not link the digest before it/.test(f.detail)));

    await put(key, original);
    assert.deepEqual((await verifyTenantDigests(s(), tenant, { now })).findings, []);
  });

  test('an auditor offline pins the public key in the config: the right one verifies, another one names every digest', async () => {
    const now = dayEnd(days[3]!) + 4 * HOUR;
    const pem = (await s().digestKeys.publicKey()).export({ type: 'spki', format: 'pem' }).toString();
    // The config accepts it as evidence.digest_public_key.
    const config = PaperclipConfig.parse({ ...s().config, evidence: { ...s().config.evidence, digest_public_key: pem } });
    const unreachable = new DigestKeys(s().clients.kms, 'alias/not-asked', config.evidence.digest_public_key);
    assert.deepEqual((await verifyTenantDigests({ evidence: s().evidence, digestKeys: unreachable }, tenant, { now })).findings, []);
    const otherPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const wrong = new DigestKeys(s().clients.kms, 'alias/not-asked', otherPem);
    const findings = (await verifyTenantDigests({ evidence: s().evidence, digestKeys: wrong }, tenant, { now })).findings;
    assert.equal(findings.filter((f) => /signature does not verify/.test(f.detail)).length, days.length);
  });

  test('the laundering: delete the newest digest, rewrite an item chain, seal.json, the sealed event and its anchor: verify names it', async () => {
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const taskId = 'T-digest-launder';
    const batch = { tenant: 'acme', taskId };
    const run = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    const batchChain = `batch:acme:${taskId}`;
    const sealed = (await s().audit.events(batchChain)).find((e) => e.type === 'sealed')!;
    const day = dayOf(sealed.at);
    const digestedAt = dayEnd(day) + 2 * HOUR;
    const verifiedAt = dayEnd(day) + 4 * HOUR;
    assert.ok((await h.paperclip.writeDigests({ now: digestedAt, tenants: ['acme'] })).written.includes(digestKey('acme', day)));
    assert.deepEqual((await verifyAll(s(), 'acme', { now: verifiedAt })).findings, []);

    // With write access to the audit table and put/delete on the bucket (no signing key):
    await remove(digestKey('acme', day));
    // 1. an item's chain rewritten (its readback dropped), every hash recomputed;
    const seal = Seal.parse(JSON.parse((await bodyOf(batchKey(batch, 'seal.json'))).toString()));
    const item = seal.items[0]!;
    const original = await s().audit.events(item.key);
    const forged: AuditEvent[] = [];
    for (const [i, e] of original.filter((e) => e.type !== 'readback').entries()) {
      forged.push(sealEvent(item.key, i + 1, forged[i - 1]?.hash ?? GENESIS_HASH, { type: e.type, actor: e.actor, data: e.data }, e.at));
    }
    await replaceChain(item.key, original, forged);
    // 2. seal.json re-made over the new hashes;
    const { sealHash: _old, ...body } = {
      ...seal,
      items: seal.items.map((i) => (i.key === item.key ? { ...i, events: forged.map((e) => e.hash) } : i)),
    };
    const newSeal = { ...body, sealHash: computeSealHash(body) };
    await s().evidence.put(batchKey(batch, 'seal.json'), JSON.stringify(newSeal, null, 2), 'application/json');
    // 3. the batch chain's sealed event (and whatever follows it) re-hashed, and 4. their anchors rewritten.
    const batchEvents = await s().audit.events(batchChain);
    const rebuilt: AuditEvent[] = [];
    for (const e of batchEvents) {
      const data =
        e.seq === sealed.seq
          ? { ...e.data, sealHash: newSeal.sealHash }
          : e.data['basedOn']
            ? { ...e.data, basedOn: newSeal.sealHash }
            : e.data;
      rebuilt.push(sealEvent(batchChain, e.seq, rebuilt.at(-1)?.hash ?? GENESIS_HASH, { type: e.type, actor: e.actor, data }, e.at));
    }
    await replaceChain(batchChain, batchEvents, rebuilt);
    for (const e of rebuilt) await anchorSealEvent(s(), 'acme', e);

    // Without the digest everything else is consistent again (the old verify reported nothing); the day must have one.
    const result = await verifyAll(s(), 'acme', { now: verifiedAt });
    const named = result.findings.map((f) => f.detail).join('; ');
    assert.ok(
      result.findings.some((f) => f.kind === 'removed' && f.object === digestKey('acme', day) && /is missing/.test(f.detail)),
      named,
    );
    assert.ok(
      result.findings.some((f) => /checked against no signed digest/.test(f.detail)),
      named,
    );
    assert.ok(
      result.findings.every((f) => f.object === digestKey('acme', day)),
      `only the missing digest gives the rewrite away here: ${named}`,
    );
    const one = await verifyBatch(s(), batch, { now: verifiedAt });
    assert.ok(one.findings.length > 0, 'verify --batch names it too');

    // The CLI says so with exit 1 (through the stack's own KMS for the public key).
    const cli = await runCli(['audit', 'verify', '--batch', `acme/${taskId}`]);
    // By the real clock the batch's day is not over yet, so its digest is not due; the CLI reads what Object Lock keeps
    // (docs/evidence.md), so the anchor written over its first version gives the rewrite away even before that.
    assert.equal(cli.code, 1, cli.stdout + cli.stderr);
    assert.match(cli.stdout, /ALTERED +anchors\/acme\/\S+ rewritten: version \S+ was written over version/);
  });

  test('paperclip audit digest writes the days a local stack missed; verify then names a deleted one (exit 1)', async () => {
    // A configured tenant: the digest function digests the configured tenants (and any that has digests already).
    const cliTenant = 'globex';
    const start = addDays(dayOf(new Date().toISOString()), -5);
    const first = sealEvent(
      `batch:${cliTenant}:T-cli`,
      1,
      GENESIS_HASH,
      { type: 'sealed', actor: 'p', data: { sealHash: 'b'.repeat(64) } },
      at(start),
    );
    await anchorSealEvent(s(), cliTenant, first);
    const wrote = await runCli(['audit', 'digest'], true);
    assert.equal(wrote.code, 0, wrote.stdout + wrote.stderr);
    assert.match(wrote.stdout, new RegExp(`wrote +${digestKey(cliTenant, start)}`));
    const clean = await runCli(['audit', 'verify', '--tenant', cliTenant]);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);

    await remove(digestKey(cliTenant, addDays(start, 2)));
    const found = await runCli(['audit', 'verify', '--tenant', cliTenant]);
    assert.equal(found.code, 1, found.stdout + found.stderr);
    // The twin keeps versions as Object Lock does: the delete is a marker over the digest, named with both versions.
    assert.match(
      found.stdout,
      new RegExp(`REMOVED +${digestKey(cliTenant, addDays(start, 2))} deleted: delete marker \\S+ covers version`),
    );
  });

  async function replaceChain(chain: string, before: readonly AuditEvent[], after: readonly AuditEvent[]): Promise<void> {
    const table = s().table('audit');
    for (const e of before) await s().clients.db.send(new DeleteCommand({ TableName: table, Key: { chain, seq: e.seq } }));
    for (const e of after) await s().clients.db.send(new PutCommand({ TableName: table, Item: e }));
  }

  function runCli(args: string[], signer = false): Promise<Finished> {
    const stack = h.paperclip.stack;
    return runPaperclipSource(args, {
      PAPERCLIP_DYNAMODB_ENDPOINT: stack.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: stack.endpoints.s3,
      PAPERCLIP_KMS_ENDPOINT: stack.endpoints.kms,
      ...(signer ? { PAPERCLIP_KMS_SIGNER: `${stack.kmsSigner.accessKeyId}:${stack.kmsSigner.secretAccessKey}` } : {}),
    });
  }
});
