import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeKeyCommand, GetPublicKeyCommand, KMSClient, SignCommand, VerifyCommand } from '@aws-sdk/client-kms';
import { startLocalKms } from '../../../twin/aws/kms.js';
import { LOCAL_CREDENTIALS } from '../../../twin/aws/aws-config.js';

/**
 * The local KMS (twin/aws/kms.ts) through @aws-sdk/client-kms: Sign only for the signer credential, the public
 * key for anyone, the key kept per data folder and never handed out.
 */

const alias = 'alias/t-digests';
const client = (endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new KMSClient({ endpoint, region: 'us-east-1', credentials });

test('signs only for the signer credential, verifies for anyone, and keeps the same key across restarts of a data folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-kms-'));
  try {
    const first = await startLocalKms({ directory: dir, aliases: [alias], region: 'us-east-1', accountId: '000000000000' });
    const signer = client(first.endpoint, { ...first.signer });
    const anyone = client(first.endpoint, { ...LOCAL_CREDENTIALS });
    const message = Buffer.from('paperclip-daily-digest:v2:abc');
    const signed = await signer.send(
      new SignCommand({ KeyId: alias, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    assert.equal(signed.KeyId, first.keyArns[alias]);
    await assert.rejects(
      anyone.send(new SignCommand({ KeyId: alias, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' })),
      (error: Error) => error.name === 'AccessDeniedException',
    );
    const publicKey = await anyone.send(new GetPublicKeyCommand({ KeyId: alias }));
    assert.equal(publicKey.KeySpec, 'ECC_NIST_P256');
    assert.deepEqual(publicKey.SigningAlgorithms, ['ECDSA_SHA_256']);
    const key = createPublicKey({ key: Buffer.from(publicKey.PublicKey!), format: 'der', type: 'spki' });
    assert.ok(verify('sha256', message, { key, dsaEncoding: 'der' }, Buffer.from(signed.Signature!)), 'a KMS-style DER ECDSA signature');
    const checked = await anyone.send(
      new VerifyCommand({
        KeyId: alias,
        Message: message,
        Signature: signed.Signature,
        MessageType: 'RAW',
        SigningAlgorithm: 'ECDSA_SHA_256',
      }),
    );
    assert.equal(checked.SignatureValid, true);
    await assert.rejects(
      anyone.send(
        new VerifyCommand({ KeyId: alias, Message: Buffer.from('other'), Signature: signed.Signature, SigningAlgorithm: 'ECDSA_SHA_256' }),
      ),
      (error: Error) => error.name === 'KMSInvalidSignatureException',
    );
    const described = await anyone.send(new DescribeKeyCommand({ KeyId: first.keyArns[alias] }));
    assert.equal(described.KeyMetadata?.KeyUsage, 'SIGN_VERIFY');
    await assert.rejects(
      anyone.send(new GetPublicKeyCommand({ KeyId: 'alias/none' })),
      (error: Error) => error.name === 'NotFoundException',
    );
    signer.destroy();
    anyone.destroy();
    await first.stop();

    assert.equal(statSync(join(dir, 'keys.json')).mode & 0o777, 0o600, 'the key file is for its owner only');
    const second = await startLocalKms({ directory: dir, aliases: [alias], region: 'us-east-1', accountId: '000000000000' });
    const again = client(second.endpoint, { ...LOCAL_CREDENTIALS });
    const samePublic = await again.send(new GetPublicKeyCommand({ KeyId: alias }));
    assert.deepEqual(Buffer.from(samePublic.PublicKey!), Buffer.from(publicKey.PublicKey!), 'the same key after a restart');
    assert.deepEqual(second.signer, first.signer);
    assert.ok(!JSON.stringify(samePublic).includes('PRIVATE'), 'no answer carries the private key');
    assert.match(readFileSync(join(dir, 'keys.json'), 'utf8'), /BEGIN PRIVATE KEY/);
    again.destroy();
    await second.stop();

    // A reader on a folder without a key (audit verify) creates none.
    const empty = mkdtempSync(join(tmpdir(), 'paperclip-kms-'));
    const reader = await startLocalKms({ directory: empty, aliases: [], region: 'us-east-1', accountId: '000000000000' });
    await reader.stop();
    assert.ok(!existsSync(join(empty, 'keys.json')), 'no key file written by a reader');
    rmSync(empty, { recursive: true, force: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
