import type { AuditEvent } from '../domain/audit-chain.js';
import type { Claim } from '../domain/claim.js';
import { batchKey, evidenceKey } from '../app/ports/evidence.js';
import { mapBounded } from '../lib/map-bounded.js';
import { batchFolder, hashObject, PAGE_NAME, S3_FAN_OUT, type BatchRef, type EvidenceContext, type HashedObject } from './folder.js';
import { parseRecord, renderItemPage, type OutcomeRecord } from './item-page.js';
import { parseBatchFile, renderBatchPage, type BatchPageItem } from './batch-page.js';

/** What the batch folder holds, from one listing: which item folders exist and which have a page or a record. */
export interface FolderIndex {
  keys: Set<string>;
  pages: Set<string>;
  records: Set<string>;
  top: Set<string>;
}

export async function indexBatchFolder(ctx: EvidenceContext, batch: BatchRef): Promise<FolderIndex> {
  const prefix = batchFolder(batch);
  const index: FolderIndex = { keys: new Set(), pages: new Set(), records: new Set(), top: new Set() };
  for (const key of await ctx.evidence.list(prefix)) {
    const parts = key.slice(prefix.length).split('/');
    if (parts.length === 1) index.top.add(parts[0]!);
    if (parts.length !== 2) continue;
    index.keys.add(parts[0]!);
    if (parts[1] === PAGE_NAME) index.pages.add(parts[0]!);
    if (parts[1] === 'record.json') index.records.add(parts[0]!);
  }
  return index;
}

export async function readRecord(
  ctx: EvidenceContext,
  batch: BatchRef,
  key: string,
): Promise<{ record?: OutcomeRecord; problem?: string }> {
  return parseRecord(await ctx.evidence.get(evidenceKey({ ...batch, key }, 'record.json')));
}

/** Renders and stores one item's page; returns the stored page's hash. */
export async function storeItemPage(
  ctx: EvidenceContext,
  batch: BatchRef,
  key: string,
  input: {
    objects: ReadonlyMap<string, HashedObject>;
    events: readonly AuditEvent[];
    claim?: Claim;
    siblingPages: ReadonlySet<string>;
    batchPage: boolean;
    /** Filled with the record read for the page, so the batch page built next does not read it again. */
    recordsRead?: Map<string, OutcomeRecord | undefined>;
  },
): Promise<HashedObject> {
  const { record, problem } = await readRecord(ctx, batch, key);
  input.recordsRead?.set(key, record);
  const objects = new Map([...input.objects].filter(([name]) => name !== PAGE_NAME));
  const html = renderItemPage({ key, ...input, objects, ...(record ? { record } : {}), ...(problem ? { recordProblem: problem } : {}) });
  const stored = await ctx.evidence.put(evidenceKey({ ...batch, key }, PAGE_NAME), html, 'text/html; charset=utf-8');
  return { name: PAGE_NAME, sha256: stored.sha256, bytes: stored.bytes };
}

export interface BatchPageSources {
  claims: readonly Claim[];
  index: FolderIndex;
  top: ReadonlyMap<string, HashedObject>;
  compensates: ReadonlyMap<string, string>;
  sealed: boolean;
  /** Records already read in this run (by the item pages); the others are read here. */
  recordsRead?: ReadonlyMap<string, OutcomeRecord | undefined>;
}

/** Renders and stores the batch page from the claims, the records and batch.json. */
export async function storeBatchPage(ctx: EvidenceContext, batch: BatchRef, input: BatchPageSources): Promise<HashedObject> {
  const html = await buildBatchPage(ctx, batch, input);
  const stored = await ctx.evidence.put(batchKey(batch, PAGE_NAME), html, 'text/html; charset=utf-8');
  return { name: PAGE_NAME, sha256: stored.sha256, bytes: stored.bytes };
}

/** The batch page rendered from the claims, every item's record and batch.json (one record read per item). */
export async function buildBatchPage(ctx: EvidenceContext, batch: BatchRef, input: BatchPageSources): Promise<string> {
  const summary = parseBatchFile(await ctx.evidence.get(batchKey(batch, 'batch.json')));
  const byKey = new Map(input.claims.map((c) => [c.key, c]));
  // One record read per item: side by side, as the item pages are (one at a time, 10,000 round trips add up to minutes).
  const items: BatchPageItem[] = await mapBounded([...new Set([...byKey.keys(), ...input.index.keys])], S3_FAN_OUT, async (key) => {
    const known = input.recordsRead?.has(key) ?? false;
    const record = !input.index.records.has(key)
      ? undefined
      : known
        ? input.recordsRead!.get(key)
        : (await readRecord(ctx, batch, key)).record;
    const claim = byKey.get(key);
    const compensates = input.compensates.get(key);
    return {
      key,
      hasPage: input.index.pages.has(key),
      ...(claim ? { claim } : {}),
      ...(record ? { record } : {}),
      ...(compensates ? { compensates } : {}),
    };
  });
  return renderBatchPage({ batch, ...(summary ? { summary } : {}), items, top: input.top, sealed: input.sealed });
}

/** Hashes the objects directly in the batch folder (not the item folders). */
export async function hashTopObjects(ctx: EvidenceContext, batch: BatchRef, names: Iterable<string>): Promise<Map<string, HashedObject>> {
  const top = new Map<string, HashedObject>();
  for (const name of names) {
    const now = await hashObject(ctx, batchKey(batch, name));
    if (now) top.set(name, { name, ...now });
  }
  return top;
}
