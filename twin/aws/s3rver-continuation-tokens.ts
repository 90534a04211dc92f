import crypto from 'node:crypto';

/**
 * s3rver encrypts ListObjectsV2 continuation tokens with single DES
 * (`createCipheriv('des', …)`), which OpenSSL 3 (Node 17 and later) refuses
 * ("digital envelope routines::unsupported"): every listing longer than one
 * page (1,000 keys) fails with a 500, so paginated reads of big batches break
 * only locally. Triple DES with the same key three times is DES, and OpenSSL 3
 * still ships it, so 'des' is served by 'des-ede3-cbc' with the key repeated:
 * the same tokens, the same bytes. Only the algorithm name 'des' is touched;
 * every other call goes straight through.
 */

let installed = false;

function tripled(key: crypto.CipherKey): crypto.CipherKey {
  const bytes = Buffer.isBuffer(key) ? key : Buffer.from(key as string);
  return bytes.length === 8 ? Buffer.concat([bytes, bytes, bytes]) : key;
}

export function serveS3rverContinuationTokens(): void {
  if (installed) return;
  installed = true;
  const createCipheriv = crypto.createCipheriv;
  const createDecipheriv = crypto.createDecipheriv;
  const patched = crypto as unknown as Record<'createCipheriv' | 'createDecipheriv', (...args: unknown[]) => unknown>;
  patched.createCipheriv = (algorithm: unknown, key: unknown, iv: unknown, options?: unknown) =>
    algorithm === 'des'
      ? createCipheriv('des-ede3-cbc', tripled(key as crypto.CipherKey), iv as crypto.BinaryLike)
      : (createCipheriv as (...args: unknown[]) => unknown)(algorithm, key, iv, options);
  patched.createDecipheriv = (algorithm: unknown, key: unknown, iv: unknown, options?: unknown) =>
    algorithm === 'des'
      ? createDecipheriv('des-ede3-cbc', tripled(key as crypto.CipherKey), iv as crypto.BinaryLike)
      : (createDecipheriv as (...args: unknown[]) => unknown)(algorithm, key, iv, options);
}
