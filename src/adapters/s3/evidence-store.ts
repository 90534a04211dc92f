import { createHash } from 'node:crypto';
import {
  GetObjectAttributesCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

import type { ObjectStore, ObjectVersion, StoredObject } from '../../app/ports/evidence.js';

/** Evidence objects in S3. Keys are laid out by evidenceKey() (src/app/ports/evidence.ts); see docs/evidence.md. */
export class EvidenceStore implements ObjectStore {
  /** Set once the endpoint answered GetObjectAttributes with something unusable (s3rver answers with the object). */
  private attributesUnusable = false;

  constructor(
    protected readonly s3: S3Client,
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

  /**
   * Every version and delete marker under `prefix` (ListObjectVersions), grouped by key, oldest
   * first within a key. On a bucket without versioning each object is one version named "null".
   */
  async versions(prefix: string): Promise<Map<string, ObjectVersion[]>> {
    const byKey = new Map<string, ObjectVersion[]>();
    let markers: { KeyMarker?: string; VersionIdMarker?: string } = {};
    for (;;) {
      const page = await this.s3.send(new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: prefix, ...markers }));
      const entries = [
        ...(page.Versions ?? []).map((v) => ({ ...v, deleteMarker: false })),
        ...(page.DeleteMarkers ?? []).map((m) => ({ ...m, deleteMarker: true })),
      ];
      for (const e of entries) {
        if (!e.Key || !e.VersionId) continue;
        const list = byKey.get(e.Key) ?? [];
        list.push({
          key: e.Key,
          versionId: e.VersionId,
          deleteMarker: e.deleteMarker,
          latest: e.IsLatest === true,
          lastModified: e.LastModified?.getTime() ?? 0,
        });
        byKey.set(e.Key, list);
      }
      if (!page.IsTruncated || !page.NextKeyMarker) break;
      markers = { KeyMarker: page.NextKeyMarker, ...(page.NextVersionIdMarker ? { VersionIdMarker: page.NextVersionIdMarker } : {}) };
    }
    // S3 reports times to the second: the latest goes last whatever its time, the rest by time.
    for (const list of byKey.values()) list.sort((a, b) => Number(a.latest) - Number(b.latest) || a.lastModified - b.lastModified);
    return byKey;
  }

  /** The bytes of one version; undefined when there is no such version or it is a delete marker. */
  async getVersion(key: string, versionId: string): Promise<Buffer | undefined> {
    try {
      const result = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, VersionId: versionId }));
      return Buffer.from(await result.Body!.transformToByteArray());
    } catch (error) {
      const name = (error as { name?: string; $metadata?: { httpStatusCode?: number } }).name;
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (name === 'NoSuchVersion' || name === 'NoSuchKey' || status === 405) return undefined;
      throw error;
    }
  }

  /**
   * The same bucket read with some keys pinned to one version each: get, exists and list see the
   * pinned version whatever was written or deleted after it (what Object Lock preserves).
   */
  pinned(pins: ReadonlyMap<string, string>): EvidenceStore {
    return new PinnedEvidenceStore(this.s3, this.bucket, pins);
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

/** An evidence store whose pinned keys read as their pinned version (see EvidenceStore.pinned). */
class PinnedEvidenceStore extends EvidenceStore {
  constructor(
    s3: S3Client,
    bucket: string,
    private readonly pins: ReadonlyMap<string, string>,
  ) {
    super(s3, bucket);
  }

  override async get(key: string): Promise<Buffer | undefined> {
    const version = this.pins.get(key);
    return version === undefined ? super.get(key) : this.getVersion(key, version);
  }

  override async exists(key: string): Promise<boolean> {
    return this.pins.has(key) || super.exists(key);
  }

  /** A pinned key is hashed from its pinned bytes: the stored checksum is the latest version's. */
  override async storedChecksum(key: string): Promise<{ sha256: string; bytes: number } | null | undefined> {
    return this.pins.has(key) ? undefined : super.storedChecksum(key);
  }

  /** A pinned key hidden by a delete marker is still listed: its pinned version exists. */
  override async list(prefix: string): Promise<string[]> {
    const keys = new Set(await super.list(prefix));
    for (const key of this.pins.keys()) if (key.startsWith(prefix)) keys.add(key);
    return [...keys].sort();
  }
}
