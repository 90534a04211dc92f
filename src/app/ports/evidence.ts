import { z } from 'zod';

/**
 * The evidence bucket (and the batches' working bucket) as the app layer uses it: put an object and get its
 * checksum back, read, list, and read pinned versions (what Object Lock preserves). The S3 adapter implements it
 * (src/adapters/s3/evidence-store.ts); a test fakes it in memory.
 */

/** What a put stored: the key, the sha256 and size of its bytes, and its content type. Steps record these as evidence. */
export const StoredObject = z.object({
  key: z.string().min(1),
  sha256: z.string(),
  bytes: z.number().int().min(0),
  contentType: z.string(),
});
export type StoredObject = z.infer<typeof StoredObject>;

/** One version or delete marker of an object, as ListObjectVersions reports it. */
export interface ObjectVersion {
  key: string;
  versionId: string;
  deleteMarker: boolean;
  /** The current version (or marker) of its key. */
  latest: boolean;
  lastModified: number;
}

export interface ObjectStore {
  readonly bucket: string;
  put(key: string, body: Buffer | string, contentType: string): Promise<StoredObject>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Whether an object is stored under this key, without reading it. */
  exists(key: string): Promise<boolean>;
  /**
   * The sha256 and size the store computed at upload: null when there is no such object, undefined when the
   * store cannot tell (then the caller hashes the bytes itself).
   */
  storedChecksum(key: string): Promise<{ sha256: string; bytes: number } | null | undefined>;
  /** Every version and delete marker under `prefix`, grouped by key, oldest first within a key. */
  versions(prefix: string): Promise<Map<string, ObjectVersion[]>>;
  /** The bytes of one version; undefined when there is no such version or it is a delete marker. */
  getVersion(key: string, versionId: string): Promise<Buffer | undefined>;
  /** The same bucket read with some keys pinned to one version each. */
  pinned(pins: ReadonlyMap<string, string>): ObjectStore;
  /** The folders (common prefixes, each ending in '/') directly under `prefix`. */
  folders(prefix: string): Promise<string[]>;
  list(prefix: string): Promise<string[]>;
}

/** evidence/<tenant>/<taskId>/<key>/<name>: one folder per write, browsable by tenant and task. */
export function evidenceKey(item: { tenant: string; taskId: string; key: string }, name: string): string {
  return `evidence/${item.tenant}/${item.taskId}/${item.key}/${name}`;
}

/** evidence/<tenant>/<taskId>/<name>: a batch's own objects, beside its items' folders. */
export function batchKey(batch: { tenant: string; taskId: string }, name: string): string {
  return `evidence/${batch.tenant}/${batch.taskId}/${name}`;
}
