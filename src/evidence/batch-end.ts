import type { AuditEvent } from '../domain/audit-chain.js';
import type { Claim } from '../domain/claim.js';
import { TERMINAL_STATUSES } from '../domain/claim.js';
import { mapBounded } from '../lib/map-bounded.js';
import {
  PAGE_NAME,
  S3_FAN_OUT,
  snapshotBatchFolder,
  snapshotItemFolder,
  type BatchRef,
  type EvidenceContext,
  type HashedObject,
} from './folder.js';
import { indexBatchFolder, storeBatchPage, storeItemPage } from './pages.js';
import { compensatesOf, type OutcomeRecord } from './item-page.js';
import { buildSeal, loadSealState, manifestOf, supplementSeal, writeSeal, type ItemForSeal, type Seal } from './seal.js';

/**
 * Items that changed this close to the seal are looked at again afterwards: a
 * write that closed while the folder was being hashed is added to the seal
 * instead of showing up as altered.
 */
const RECHECK_WINDOW_MS = 30_000;

export interface FinishedBatchEvidence {
  seal: Seal;
  items: number;
  pages: number;
  supplemented: string[];
}

/**
 * The end of a batch: every item page is rendered again (now that the batch
 * page exists and every sibling's page too), then the batch page, then the
 * seal over all of it. Items an earlier seal already fixed as terminal keep
 * their page and hashes.
 */
export async function finishBatchEvidence(ctx: EvidenceContext, batch: BatchRef, sealedBy: string): Promise<FinishedBatchEvidence> {
  const started = Date.now();
  const previous = (await loadSealState(ctx, batch)).manifest;
  const claims = await ctx.claims.byTask(batch.taskId, batch.tenant);
  const snapshot = await snapshotBatchFolder(ctx, batch);
  const byKey = new Map(claims.map((c) => [c.key, c]));
  const keys = [...new Set([...byKey.keys(), ...snapshot.items.keys()])].sort();
  const fixed = (key: string) => {
    const status = previous?.items.get(key)?.status;
    return status !== undefined && TERMINAL_STATUSES.includes(status as Claim['status']);
  };

  const chains = await mapBounded(keys, S3_FAN_OUT, (key) => ctx.audit.events(key));
  const events = new Map<string, AuditEvent[]>(keys.map((key, i) => [key, chains[i]!]));
  const compensates = new Map<string, string>();
  for (const [key, chain] of events) {
    const undone = compensatesOf(chain);
    if (undone) compensates.set(key, undone);
  }
  const siblingPages = new Set(keys.filter((k) => !fixed(k) || snapshot.items.get(k)?.has(PAGE_NAME)));
  const rendered = keys.filter((key) => !fixed(key));
  // Each item page reads the item's record; the batch page reuses them instead of reading every record a second time.
  const recordsRead = new Map<string, OutcomeRecord | undefined>();
  await mapBounded(rendered, S3_FAN_OUT, async (key) => {
    const objects = snapshot.items.get(key) ?? new Map<string, HashedObject>();
    const claim = byKey.get(key);
    const page = await storeItemPage(ctx, batch, key, {
      objects,
      events: events.get(key) ?? [],
      ...(claim ? { claim } : {}),
      siblingPages,
      batchPage: true,
      recordsRead,
    });
    objects.set(PAGE_NAME, page);
    snapshot.items.set(key, objects);
  });
  const pages = rendered.length;
  // A re-run that found every item fixed by an earlier seal changes no page: the first run's batch page stays as it was.
  if (rendered.length > 0 || !snapshot.top.has(PAGE_NAME)) {
    const index = await indexBatchFolder(ctx, batch);
    snapshot.top.set(
      PAGE_NAME,
      await storeBatchPage(ctx, batch, { claims, index, top: snapshot.top, compensates, sealed: true, recordsRead }),
    );
  }

  const items: ItemForSeal[] = keys.map((key) => ({
    key,
    events: events.get(key) ?? [],
    ...(byKey.get(key) ? { status: byKey.get(key)!.status, billNo: byKey.get(key)!.billNo, action: byKey.get(key)!.action } : {}),
  }));
  const seal = buildSeal(batch, snapshot, items, sealedBy, previous);
  const sealEvent = await writeSeal(ctx, seal);

  const supplemented = await recheckRecentItems(ctx, batch, {
    seal,
    sealedAtSeq: sealEvent.seq,
    before: byKey,
    since: started - RECHECK_WINDOW_MS,
    sealedBy,
    fixed,
  });
  return { seal, items: keys.length, pages, supplemented };
}

async function recheckRecentItems(
  ctx: EvidenceContext,
  batch: BatchRef,
  input: {
    seal: Seal;
    sealedAtSeq: number;
    before: ReadonlyMap<string, Claim>;
    since: number;
    sealedBy: string;
    fixed: (key: string) => boolean;
  },
): Promise<string[]> {
  const now = await ctx.claims.byTask(batch.taskId, batch.tenant);
  const manifest = manifestOf(input.seal, input.sealedAtSeq, []);
  const recent = now.filter((claim) => {
    const earlier = input.before.get(claim.key);
    const moved = !earlier || earlier.status !== claim.status || earlier.version !== claim.version;
    return !input.fixed(claim.key) && (moved || Date.parse(claim.updatedAt) >= input.since);
  });
  // The last items of a large batch all closed within the window: looked at side by side, not one round trip after another.
  type Addition = ItemForSeal & { objects: Map<string, HashedObject> };
  const looked = await mapBounded(recent, S3_FAN_OUT, async (claim): Promise<Addition | undefined> => {
    const sealed = manifest.items.get(claim.key);
    const [events, objects] = await Promise.all([ctx.audit.events(claim.key), snapshotItemFolder(ctx, batch, claim.key)]);
    const same =
      sealed !== undefined &&
      sealed.events.length === events.length &&
      sealed.objects.length === objects.size &&
      sealed.objects.every((o) => objects.get(o.name)?.sha256 === o.sha256);
    return same ? undefined : { key: claim.key, events, objects, status: claim.status, billNo: claim.billNo, action: claim.action };
  });
  const additions = looked.filter((a): a is Addition => a !== undefined);
  if (additions.length === 0) return [];
  await supplementSeal(ctx, manifest, additions, undefined, input.sealedBy, { replaceTerminal: true });
  return additions.map((a) => a.key);
}

/**
 * Called by summarizeBatch after batch.json is stored: pages and seal. Never
 * throws; a batch without a seal is what `paperclip audit verify` reports.
 */
export async function sealBatchEvidence(
  ctx: EvidenceContext,
  batch: BatchRef,
  input: { sealedBy: string },
): Promise<FinishedBatchEvidence | undefined> {
  try {
    return await finishBatchEvidence(ctx, batch, input.sealedBy);
  } catch (error) {
    process.stderr.write(`paperclip: could not seal batch ${batch.tenant}/${batch.taskId}: ${(error as Error).stack ?? String(error)}\n`);
    return undefined;
  }
}
