import type { KeyObject } from 'node:crypto';

/**
 * Secrets and keys the app layer reads or signs with: plain secret strings (src/adapters/secrets/secret-strings.ts),
 * the daily digests' signing key (src/adapters/kms/digest-keys.ts), approvers' ID tokens (src/adapters/oidc/id-token-verifier.ts).
 */

/** Plain secrets by id (the approval signing key on AWS). */
export interface SecretStringsPort {
  get(secretId: string): Promise<string | undefined>;
}

/** The one algorithm digests are signed with: ECDSA on P-256 over SHA-256, DER-encoded (KMS's name for it). */
export const DIGEST_SIGNING_ALGORITHM = 'ECDSA_SHA_256';

export interface DigestSignature {
  /** Which key signed (the ARN KMS answered with). */
  keyId: string;
  algorithm: typeof DIGEST_SIGNING_ALGORITHM;
  /** base64 of the DER signature. */
  value: string;
}

export interface DigestKeysPort {
  readonly keyId: string;
  /** Signs a message of at most 4,096 bytes; callers sign a hash of what they protect. */
  sign(message: Buffer): Promise<DigestSignature>;
  /** The public key signatures are checked with. */
  publicKey(): Promise<KeyObject>;
}

/** The claims of a verified ID token. */
export interface IdTokenClaims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  [claim: string]: unknown;
}

export interface IdTokensPort {
  /**
   * The token's payload once its signature verifies with one of the issuer's published keys, its `iss` is the
   * issuer and its `aud` the client, at `at` with `toleranceSeconds` of clock skew; throws naming why not.
   */
  verify(token: string, expect: { issuer: string; audience: string; at: Date; toleranceSeconds: number }): Promise<IdTokenClaims>;
}
