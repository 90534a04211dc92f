import { createPublicKey, type KeyObject } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { DIGEST_SIGNING_ALGORITHM, type DigestKeysPort, type DigestSignature } from '../../app/ports/keys.js';

/**
 * The asymmetric key daily digests are signed with, in KMS: `Sign` needs the
 * digest function's role (the key policy grants it to nobody else), the public
 * half is for anyone verifying. A public key pinned in the configuration (an
 * auditor offline, or one who does not trust the account's KMS answer) is used
 * instead of GetPublicKey.
 */
export class DigestKeys implements DigestKeysPort {
  private publicKeyPromise: Promise<KeyObject> | undefined;

  constructor(
    private readonly kms: KMSClient,
    readonly keyId: string,
    private readonly pinnedPublicKeyPem?: string,
  ) {}

  /** Signs a message of at most 4,096 bytes (KMS's RAW limit); callers sign a hash of what they protect. */
  async sign(message: Buffer): Promise<DigestSignature> {
    const answer = await this.kms.send(
      new SignCommand({ KeyId: this.keyId, Message: message, MessageType: 'RAW', SigningAlgorithm: DIGEST_SIGNING_ALGORITHM }),
    );
    if (!answer.Signature || !answer.KeyId) throw new Error(`KMS Sign with ${this.keyId} returned no signature`);
    return { keyId: answer.KeyId, algorithm: DIGEST_SIGNING_ALGORITHM, value: Buffer.from(answer.Signature).toString('base64') };
  }

  /** The public key signatures are checked with: the pinned one, else KMS GetPublicKey (once per process). */
  publicKey(): Promise<KeyObject> {
    this.publicKeyPromise ??= (async () => {
      if (this.pinnedPublicKeyPem) return createPublicKey(this.pinnedPublicKeyPem);
      const answer = await this.kms.send(new GetPublicKeyCommand({ KeyId: this.keyId }));
      if (!answer.PublicKey) throw new Error(`KMS GetPublicKey of ${this.keyId} returned no key`);
      return createPublicKey({ key: Buffer.from(answer.PublicKey), format: 'der', type: 'spki' });
    })();
    // A failed lookup is not cached: the next verify asks again.
    this.publicKeyPromise.catch(() => (this.publicKeyPromise = undefined));
    return this.publicKeyPromise;
  }
}
