/**
 * Client settings for the local emulators. Nothing here is global: callers
 * pass the returned object to each SDK client they construct.
 */

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * One dummy key pair for every emulator. s3rver only accepts requests signed
 * with the key it registers by default (S3RVER/S3RVER); the others accept any.
 */
export const LOCAL_CREDENTIALS = Object.freeze({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });

export interface LocalClientConfig {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** s3rver serves buckets by path, not by virtual host. */
  forcePathStyle: true;
  /**
   * Recent SDKs send S3 bodies with aws-chunked trailing checksums by default;
   * s3rver stores the chunk framing verbatim. Only checksum when S3 requires it.
   */
  requestChecksumCalculation: 'WHEN_REQUIRED';
  responseChecksumValidation: 'WHEN_REQUIRED';
}

export function awsClientConfig(endpoint: string, region: string = LOCAL_REGION): LocalClientConfig {
  return {
    endpoint,
    region,
    credentials: { ...LOCAL_CREDENTIALS },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}
