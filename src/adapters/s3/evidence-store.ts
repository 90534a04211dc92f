import { createHash } from 'node:crypto';
import {
  GetObjectAttributesCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  paginateListObjectsV2,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

export interface StoredObject {
  key: string;
  sha256: string;
  bytes: number;
  contentType: string;
}

/** Evidence objects in S3. Keys are laid out by evidenceKey(); see docs/evidence.md. */
export class EvidenceStore {
  /** Set once the endpoint answered GetObjectAttributes with something unusable (s3rver answers with the object). */
  private attributesUnusable = false;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer | string, contentType: string): Promise<StoredObject> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentType: contentType,
        Metadata: { sha256 },
        // S3 verifies and keeps this checksum, so a seal can read it (GetObjectAttributes) without
        // reading objects whose bytes it may not see, such as traces.
        ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
      }),
    );
    return { key, sha256, bytes: bytes.length, contentType };
  }

  /**
   * The object's bytes, or undefined when there is none. The functions may list
   * only under a prefix (a condition on s3:ListBucket), and a GET carries no
   * prefix, so for a missing key S3 answers 403 AccessDenied, not 404: a denied
   * GET is taken as "missing" only when a listing narrowed to the key finds
   * nothing (the first seal of a batch reads a seal.json that does not exist yet).
   */
  async get(key: string): Promise<Buffer | undefined> {
    try {
      const result = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await result.Body!.transformToByteArray());
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NoSuchKey') return undefined;
      if (name === 'AccessDenied' && !(await this.exists(key).catch(() => true))) return undefined;
      throw error;
    }
  }

  /**
   * Whether an object is stored under this key, without reading it. A listing
   * narrowed to the key rather than a HEAD: the functions may list only under
   * evidence/ (a prefix condition), and without a list grant that applies, S3
   * answers a HEAD of a missing key with 403 instead of 404.
   */
  async exists(key: string): Promise<boolean> {
    const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: key, MaxKeys: 1 }));
    return page.Contents?.[0]?.Key === key;
  }

  /**
   * The sha256 and size S3 computed at upload (GetObjectAttributes: no bytes
   * moved, and the sealing roles may not read traces). Null when there is no
   * such object; undefined when S3 cannot tell (no whole-object checksum, a
   * denied or unsupported call): then the caller hashes the bytes itself.
   */
  async storedChecksum(key: string): Promise<{ sha256: string; bytes: number } | null | undefined> {
    if (this.attributesUnusable) return undefined;
    try {
      const attributes = await this.s3.send(
        new GetObjectAttributesCommand({ Bucket: this.bucket, Key: key, ObjectAttributes: ['Checksum', 'ObjectSize'] }),
      );
      const checksum = attributes.Checksum?.ChecksumSHA256;
      // A composite (multipart) checksum ends in -<parts> and is not the object's sha256.
      if (checksum && !checksum.includes('-') && attributes.ObjectSize !== undefined) {
        return { sha256: Buffer.from(checksum, 'base64').toString('hex'), bytes: attributes.ObjectSize };
      }
    } catch (error) {
      const name = (error as { name?: string }).name ?? '';
      if (name === 'NoSuchKey' || name === 'NotFound') return null;
      if (name !== 'AccessDenied') this.attributesUnusable = true;
    }
    return undefined;
  }

  /** The folders (common prefixes, each ending in '/') directly under `prefix`. */
  async folders(prefix: string): Promise<string[]> {
    const prefixes: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: prefix, Delimiter: '/' })) {
      prefixes.push(...(page.CommonPrefixes ?? []).map((p) => p.Prefix!).filter(Boolean));
    }
    return prefixes;
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: prefix })) {
      keys.push(...(page.Contents ?? []).map((o) => o.Key!).filter(Boolean));
    }
    return keys;
  }
}

/** evidence/<tenant>/<taskId>/<key>/<name>: one folder per write, browsable by tenant and task. */
export function evidenceKey(item: { tenant: string; taskId: string; key: string }, name: string): string {
  return `evidence/${item.tenant}/${item.taskId}/${item.key}/${name}`;
}

export function batchKey(batch: { tenant: string; taskId: string }, name: string): string {
  return `evidence/${batch.tenant}/${batch.taskId}/${name}`;
}
