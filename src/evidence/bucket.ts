import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { contentTypeOf } from './folder.js';

/**
 * Read-only access to the evidence bucket for browsing: one level of a
 * "folder" (sub-folders and objects) and single objects. Two sources: the
 * s3rver folder inside a local data folder (works whether or not a stack is
 * running on it), or any S3 API endpoint.
 */
export interface BucketListing {
  folders: string[];
  objects: Array<{ key: string; bytes: number; modified?: Date }>;
}

export interface BucketReader {
  describe(): string;
  list(prefix: string): Promise<BucketListing>;
  get(key: string): Promise<{ body: Buffer; contentType: string } | undefined>;
}

const OBJECT_SUFFIX = '._S3rver_object';
const METADATA_SUFFIX = '._S3rver_metadata.json';

/** s3rver's on-disk layout: <root>/<bucket>/<key dirs>/<name>._S3rver_object, content type in the metadata file beside it. */
export class S3rverFolderBucket implements BucketReader {
  constructor(private readonly bucketDir: string) {}

  describe(): string {
    return this.bucketDir;
  }

  async list(prefix: string): Promise<BucketListing> {
    const dir = join(this.bucketDir, ...prefix.split('/').filter(Boolean));
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
        return { folders: [], objects: [] };
      throw error;
    }
    const listing: BucketListing = { folders: [], objects: [] };
    for (const entry of entries) {
      if (entry.isDirectory()) listing.folders.push(`${prefix}${entry.name}/`);
      else if (entry.name.endsWith(OBJECT_SUFFIX)) {
        const info = await stat(join(dir, entry.name));
        listing.objects.push({ key: `${prefix}${entry.name.slice(0, -OBJECT_SUFFIX.length)}`, bytes: info.size, modified: info.mtime });
      }
    }
    listing.folders.sort();
    listing.objects.sort((a, b) => a.key.localeCompare(b.key));
    return listing;
  }

  async get(key: string): Promise<{ body: Buffer; contentType: string } | undefined> {
    const parts = key.split('/');
    const path = join(this.bucketDir, ...parts);
    try {
      const body = await readFile(`${path}${OBJECT_SUFFIX}`);
      let contentType = contentTypeOf(key);
      try {
        const metadata = JSON.parse(await readFile(`${path}${METADATA_SUFFIX}`, 'utf8')) as Record<string, unknown>;
        if (typeof metadata['content-type'] === 'string') contentType = metadata['content-type'];
      } catch {
        // no metadata file: fall back to the extension
      }
      return { body, contentType };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
      throw error;
    }
  }
}

/** Any S3 API: the local stack's s3rver endpoint, or a real bucket. */
export class S3ApiBucket implements BucketReader {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  describe(): string {
    return `s3://${this.bucket}`;
  }

  async list(prefix: string): Promise<BucketListing> {
    const listing: BucketListing = { folders: [], objects: [] };
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: prefix, Delimiter: '/' })) {
      listing.folders.push(...(page.CommonPrefixes ?? []).map((p) => p.Prefix!).filter(Boolean));
      listing.objects.push(
        ...(page.Contents ?? []).map((o) => ({ key: o.Key!, bytes: o.Size ?? 0, ...(o.LastModified ? { modified: o.LastModified } : {}) })),
      );
    }
    return listing;
  }

  async get(key: string): Promise<{ body: Buffer; contentType: string } | undefined> {
    try {
      const result = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { body: Buffer.from(await result.Body!.transformToByteArray()), contentType: result.ContentType ?? contentTypeOf(key) };
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }
}
