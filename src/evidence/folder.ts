import { createHash } from 'node:crypto';
import type { Services } from '../app/services.js';
import { KEY_PATTERN } from '../domain/task.js';
import { batchKey } from '../adapters/s3/evidence-store.js';
import { mapBounded } from '../lib/map-bounded.js';

/** What the evidence views need from the services bundle: the stores, not the browser. */
export type EvidenceContext = Pick<Services, 'claims' | 'audit' | 'evidence' | 'config' | 'digestKeys'>;

export interface BatchRef {
  tenant: string;
  taskId: string;
}

/** An object as it is now: name relative to its folder, and the sha256 of its bytes. */
export interface HashedObject {
  name: string;
  sha256: string;
  bytes: number;
}

export const sha256Hex = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * The sha256 and size of an object as it is now: the SHA-256 checksum S3
 * computed at upload when there is one, otherwise the bytes read and hashed.
 * Never taken from user metadata, which anyone writing the object could set.
 */
export async function hashObject(
  ctx: Pick<EvidenceContext, 'evidence'>,
  key: string,
): Promise<{ sha256: string; bytes: number } | undefined> {
  const stored = await ctx.evidence.storedChecksum(key);
  if (stored === null) return undefined;
  if (stored) return stored;
  const body = await ctx.evidence.get(key);
  return body ? { sha256: sha256Hex(body), bytes: body.length } : undefined;
}

/** Requests in flight when a step fans out over a whole batch folder or its chains. */
export const S3_FAN_OUT = 16;

export const PAGE_NAME = 'index.html';
export const SEAL_NAME = 'seal.json';
/** The list a batch read, stored before it starts any item: its presence says the task folder is a batch's. */
export const BATCH_LIST_NAME = 'list.json';

export function batchFolder(batch: BatchRef): string {
  return batchKey(batch, '');
}

/** The audit chain that seals a batch (one per tenant and task). */
export function batchChain(batch: BatchRef): string {
  return `batch:${batch.tenant}:${batch.taskId}`;
}

/**
 * Every object under a batch folder, grouped: top-level objects (list.png,
 * batch.json, index.html, seal.json) and one group per item folder. Hashes are
 * computed from the bytes read now, never taken from object metadata.
 */
export interface BatchFolderSnapshot {
  batch: BatchRef;
  top: Map<string, HashedObject>;
  items: Map<string, Map<string, HashedObject>>;
  /** Objects deeper than <key>/<name>: never written by Paperclip. */
  nested: string[];
}

export async function snapshotBatchFolder(ctx: EvidenceContext, batch: BatchRef): Promise<BatchFolderSnapshot> {
  const prefix = batchFolder(batch);
  const entries = (await ctx.evidence.list(prefix)).sort().map((key) => ({ key, parts: key.slice(prefix.length).split('/') }));
  const snapshot: BatchFolderSnapshot = { batch, top: new Map(), items: new Map(), nested: [] };
  snapshot.nested.push(...entries.filter((e) => e.parts.length > 2).map((e) => e.parts.join('/')));
  const flat = entries.filter((e) => e.parts.length <= 2);
  // A batch folder holds several objects per item, each a round trip to S3: hash them side by side.
  const hashed = await mapBounded(flat, S3_FAN_OUT, (e) => hashObject(ctx, e.key));
  flat.forEach(({ parts }, i) => {
    const now = hashed[i];
    if (!now) return; // removed between list and get
    const object = { name: parts.at(-1)!, ...now };
    if (parts.length === 1) snapshot.top.set(object.name, object);
    else {
      const folder = snapshot.items.get(parts[0]!) ?? new Map<string, HashedObject>();
      folder.set(object.name, object);
      snapshot.items.set(parts[0]!, folder);
    }
  });
  return snapshot;
}

/** The objects of one item folder, hashed. */
export async function snapshotItemFolder(ctx: EvidenceContext, batch: BatchRef, key: string): Promise<Map<string, HashedObject>> {
  const prefix = `${batchFolder(batch)}${key}/`;
  const names = (await ctx.evidence.list(prefix))
    .sort()
    .map((objectKey) => objectKey.slice(prefix.length))
    .filter((name) => !name.includes('/'));
  // Read and hash the objects side by side: this runs as every item closes, and each read is a round trip to S3.
  const hashed = await Promise.all(names.map((name) => hashObject(ctx, prefix + name)));
  const found = new Map<string, HashedObject>();
  names.forEach((name, i) => {
    const now = hashed[i];
    if (now) found.set(name, { name, ...now });
  });
  return found;
}

export function contentTypeOf(name: string): string {
  if (name.endsWith('.png')) return 'image/png';
  if (name.endsWith('.json')) return 'application/json';
  if (name.endsWith('.zip')) return 'application/zip';
  if (name.endsWith('.html')) return 'text/html; charset=utf-8';
  if (name.endsWith('.csv')) return 'text/csv; charset=utf-8';
  return 'application/octet-stream';
}

/** A batch result's idempotency key: given, or the name of its guarded-write execution (named by the key). */
export function resultKey(result: { key?: string; executionArn?: string }): string | undefined {
  if (result.key) return result.key;
  const name = result.executionArn?.split(':').at(-1);
  return name && KEY_PATTERN.test(name) ? name : undefined;
}
