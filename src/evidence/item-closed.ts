import type { AuditEvent } from '../domain/audit-chain.js';
import { classifyItem } from '../report/classify.js';
import { emitItemMetrics } from '../report/emf.js';
import { PAGE_NAME, SEAL_NAME, snapshotItemFolder, type BatchRef, type EvidenceContext } from './folder.js';
import { compensatesOf, hashTopObjects, indexBatchFolder, storeBatchPage, storeItemPage } from './pages.js';
import { loadSealState, supplementSeal } from './seal.js';

export type CloseKind = 'done' | 'takeover' | 'rejected' | 'expired' | 'stale';

/**
 * Called once an item's record.json and final audit event are stored: writes
 * the item's evidence page, adds the item to its batch's seal when the batch
 * was already sealed (an approval decided after the batch ended), and emits
 * the item's metrics.
 *
 * It never throws: the item's outcome is already recorded, and a failure here
 * must not make the workflow retry a step whose claim has moved on. A missing
 * page or seal entry is what `paperclip audit verify` reports.
 */
export async function recordClosedItem(
  ctx: EvidenceContext,
  item: { key: string; tenant: string; taskId: string },
  close: CloseKind,
): Promise<void> {
  const batch: BatchRef = { tenant: item.tenant, taskId: item.taskId };
  let events: AuditEvent[] = [];
  try {
    events = await ctx.audit.events(item.key);
    const claim = await ctx.claims.get(item.key);
    const index = await indexBatchFolder(ctx, batch);
    const objects = await snapshotItemFolder(ctx, batch, item.key);
    const siblingPages = new Set([...index.pages, item.key]);
    await storeItemPage(ctx, batch, item.key, { objects, events, ...(claim ? { claim } : {}), siblingPages, batchPage: index.top.has('batch.json') });
    if (index.top.has(SEAL_NAME)) await addToSeal(ctx, batch, item.key, events);
  } catch (error) {
    warn(`evidence page for ${item.key}`, error);
  }
  try {
    const claim = await ctx.claims.get(item.key);
    if (claim) emitItemMetrics(classifyItem(claim, events), close);
  } catch (error) {
    warn(`metrics for ${item.key}`, error);
  }
}

async function addToSeal(ctx: EvidenceContext, batch: BatchRef, key: string, events: readonly AuditEvent[]): Promise<void> {
  const state = await loadSealState(ctx, batch);
  if (!state.manifest) return; // a seal.json the chain does not vouch for: verify reports it; do not build on it
  const claims = (await ctx.claims.byTask(batch.taskId)).filter((c) => c.tenant === batch.tenant);
  const index = await indexBatchFolder(ctx, batch);
  const compensates = new Map<string, string>();
  for (const k of index.keys) {
    const undone = compensatesOf(k === key ? events : await ctx.audit.events(k));
    if (undone) compensates.set(k, undone);
  }
  const top = await hashTopObjects(ctx, batch, [...index.top].filter((n) => n !== PAGE_NAME));
  const batchPage = await storeBatchPage(ctx, batch, { claims, index, top, compensates, sealed: true });
  const claim = claims.find((c) => c.key === key);
  const objects = await snapshotItemFolder(ctx, batch, key);
  await supplementSeal(
    ctx,
    state.manifest,
    [{ key, events, objects, ...(claim ? { status: claim.status, billNo: claim.billNo, action: claim.action } : {}) }],
    batchPage,
    claim?.identity ?? 'paperclip',
  );
}

function warn(what: string, error: unknown): void {
  process.stderr.write(`paperclip: could not write the ${what}: ${(error as Error).message ?? String(error)}\n`);
}
