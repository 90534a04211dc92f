import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { Services } from '../app/services.js';
import { KEY_PATTERN } from '../domain/task.js';
import { evidenceOf } from '../domain/audit-events.js';
import { batchKey } from '../app/ports/evidence.js';
import { mapBounded } from '../lib/map-bounded.js';
import { logger } from '../observability/telemetry.js';

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
 * A JSON object of an evidence folder (record.json, seal.json) checked against its schema: the value, or one line
 * naming the object, the field and what is wrong, for a page or a verifier to report instead of throwing.
 */
export function parseFolderJson<T extends z.ZodType>(
  name: string,
  body: Buffer,
  schema: T,
): { ok: true; value: z.output<T> } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return { ok: false, problem: `${name} is not JSON: ${(error as Error).message}` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${name}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, value: parsed.data };
}

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

/** A checksum as the writer recorded it when it stored the object (EvidenceStore.put returns it). */
export interface RecordedChecksum {
  sha256: string;
  bytes: number;
}

/** An object a seal could not hash: neither a checksum recorded at upload nor a read it may make. */
export interface UnreadableObject {
  /** Relative to the batch folder: `<key>/<name>` or a top-level name. */
  name: string;
  reason: string;
}

const RECORD_NAME = 'record.json';

/**
 * The checksums an item's record.json lists for its evidence (every object the
 * write stored, with the sha256 and size computed as it was uploaded), by
 * object key. A seal takes these instead of reading the objects: the sealing
 * functions may not read traces (the bucket policy denies it to all but the
 * auditor), and `paperclip audit verify`, run as the auditor, compares them
 * with the bytes.
 */
async function recordedChecksums(ctx: Pick<EvidenceContext, 'evidence'>, folder: string): Promise<Map<string, RecordedChecksum>> {
  const recorded = new Map<string, RecordedChecksum>();
  const body = await ctx.evidence.get(folder + RECORD_NAME);
  if (!body) return recorded;
  let evidence: unknown;
  try {
    evidence = (JSON.parse(body.toString('utf8')) as { evidence?: unknown }).evidence;
  } catch {
    return recorded; // an unreadable record is the item page's and verify's finding; the objects are hashed as they are
  }
  if (!Array.isArray(evidence)) return recorded;
  for (const entry of evidence as Array<Record<string, unknown>>) {
    if (typeof entry?.['key'] === 'string' && typeof entry['sha256'] === 'string' && /^[0-9a-f]{64}$/.test(entry['sha256'])) {
      recorded.set(entry['key'], { sha256: entry['sha256'], bytes: typeof entry['bytes'] === 'number' ? entry['bytes'] : 0 });
    }
  }
  return recorded;
}

type Hashed = { found: RecordedChecksum } | { missing: true } | { unreadable: string };

/** The evidence entries (`data.evidence`) of an item's audit chain: what a write recorded when a record.json does not list it (a takeover). */
function chainRecorded(ctx: Pick<EvidenceContext, 'audit'>): (itemKey: string) => Promise<Map<string, RecordedChecksum>> {
  const loaded = new Map<string, Promise<Map<string, RecordedChecksum>>>();
  return (itemKey) => {
    let found = loaded.get(itemKey);
    if (!found) {
      found = ctx.audit.events(itemKey).then((events) => {
        const recorded = new Map<string, RecordedChecksum>();
        for (const event of events) {
          for (const entry of evidenceOf(event)) {
            if (typeof entry !== 'string' && entry.sha256 !== undefined && /^[0-9a-f]{64}$/.test(entry.sha256)) {
              recorded.set(entry.key, { sha256: entry.sha256, bytes: entry.bytes ?? 0 });
            }
          }
        }
        return recorded;
      });
      loaded.set(itemKey, found);
    }
    return found;
  };
}

const TRACE_NAME = /trace\.zip$/;

/**
 * The object's checksum as recorded at upload (the item's record.json, else its audit chain), else as S3 has it now.
 * A trace is never read: only the auditor may. An object it can neither find recorded nor read is a finding, not a failure.
 */
async function hashForSeal(
  ctx: Pick<EvidenceContext, 'evidence' | 'audit'>,
  key: string,
  recorded: ReadonlyMap<string, RecordedChecksum>,
  fromChain: (() => Promise<ReadonlyMap<string, RecordedChecksum>>) | undefined,
): Promise<Hashed> {
  const atUpload = recorded.get(key);
  if (atUpload) return { found: atUpload };
  const inChain = async () => (fromChain ? (await fromChain().catch(() => new Map<string, RecordedChecksum>())).get(key) : undefined);
  if (TRACE_NAME.test(key)) {
    const chained = await inChain();
    return chained ? { found: chained } : { unreadable: 'a trace no record.json or audit event lists: it is never read to seal it' };
  }
  try {
    const now = await hashObject(ctx, key);
    return now ? { found: now } : { missing: true };
  } catch (error) {
    const chained = await inChain();
    return chained ? { found: chained } : { unreadable: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** A seal that leaves an object out says so loudly: one log line per object, which the alarms on ERROR lines see. */
function alertUnreadable(batch: BatchRef, unreadable: readonly UnreadableObject[]): void {
  for (const object of unreadable) {
    logger.error('evidence object left out of the seal: no checksum recorded at upload, and it cannot be read', {
      tenant: batch.tenant,
      taskId: batch.taskId,
      object: object.name,
      reason: object.reason,
    });
  }
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
 * the checksums recorded at upload (an item's record.json lists them), or S3's
 * own checksum or the bytes read now for objects no record lists; never taken
 * from object metadata. A trace is never read to seal it.
 */
export interface BatchFolderSnapshot {
  batch: BatchRef;
  top: Map<string, HashedObject>;
  items: Map<string, Map<string, HashedObject>>;
  /** Objects deeper than <key>/<name>: never written by Paperclip. */
  nested: string[];
  /** Objects it could not hash (see hashForSeal): the seal lists them as findings. */
  unreadable: UnreadableObject[];
}

export async function snapshotBatchFolder(ctx: EvidenceContext, batch: BatchRef): Promise<BatchFolderSnapshot> {
  const prefix = batchFolder(batch);
  const entries = (await ctx.evidence.list(prefix)).sort().map((key) => ({ key, parts: key.slice(prefix.length).split('/') }));
  const snapshot: BatchFolderSnapshot = { batch, top: new Map(), items: new Map(), nested: [], unreadable: [] };
  snapshot.nested.push(...entries.filter((e) => e.parts.length > 2).map((e) => e.parts.join('/')));
  const flat = entries.filter((e) => e.parts.length <= 2);
  const withRecord = [...new Set(flat.filter((e) => e.parts.length === 2 && e.parts[1] === RECORD_NAME).map((e) => e.parts[0]!))];
  const records = await mapBounded(withRecord, S3_FAN_OUT, (key) => recordedChecksums(ctx, `${prefix}${key}/`));
  const recorded = new Map(records.flatMap((r) => [...r]));
  const chains = chainRecorded(ctx);
  // A batch folder holds several objects per item, each a round trip to S3: hash them side by side.
  const hashed = await mapBounded(flat, S3_FAN_OUT, (e) =>
    hashForSeal(ctx, e.key, recorded, e.parts.length === 2 ? () => chains(e.parts[0]!) : undefined),
  );
  flat.forEach(({ parts }, i) => {
    const result = hashed[i]!;
    if ('missing' in result) return; // removed between list and get
    if ('unreadable' in result) {
      snapshot.unreadable.push({ name: parts.join('/'), reason: result.unreadable });
      return;
    }
    const object = { name: parts.at(-1)!, ...result.found };
    if (parts.length === 1) snapshot.top.set(object.name, object);
    else {
      const folder = snapshot.items.get(parts[0]!) ?? new Map<string, HashedObject>();
      folder.set(object.name, object);
      snapshot.items.set(parts[0]!, folder);
    }
  });
  alertUnreadable(batch, snapshot.unreadable);
  return snapshot;
}

/** The objects of one item folder, hashed. */
export async function snapshotItemFolder(ctx: EvidenceContext, batch: BatchRef, key: string): Promise<Map<string, HashedObject>> {
  const prefix = `${batchFolder(batch)}${key}/`;
  const names = (await ctx.evidence.list(prefix))
    .sort()
    .map((objectKey) => objectKey.slice(prefix.length))
    .filter((name) => !name.includes('/'));
  const recorded = names.includes(RECORD_NAME) ? await recordedChecksums(ctx, prefix) : new Map<string, RecordedChecksum>();
  // Read and hash the objects side by side: this runs as every item closes, and each read is a round trip to S3.
  const chain = chainRecorded(ctx);
  const hashed = await Promise.all(names.map((name) => hashForSeal(ctx, prefix + name, recorded, () => chain(key))));
  const found = new Map<string, HashedObject>();
  const unreadable: UnreadableObject[] = [];
  names.forEach((name, i) => {
    const result = hashed[i]!;
    if ('found' in result) found.set(name, { name, ...result.found });
    if ('unreadable' in result) unreadable.push({ name: `${key}/${name}`, reason: result.unreadable });
  });
  alertUnreadable(batch, unreadable);
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
