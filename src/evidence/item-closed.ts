import type { AuditEvent } from '../domain/audit-chain.js';
import type { Claim } from '../domain/claim.js';
import { classifyItem } from '../report/classify.js';
import { emitItemMetrics, type CloseKind } from '../report/emf.js';
import { BATCH_LIST_NAME, PAGE_NAME, SEAL_NAME, snapshotItemFolder, type BatchRef, type EvidenceContext } from './folder.js';
import { storeItemPage } from './pages.js';
import { linkedItemKeys, type OutcomeRecord } from './item-page.js';
import { batchKey, evidenceKey } from '../app/ports/evidence.js';
import { sealStandaloneItem } from './seal.js';
import { addLateItem } from './late-seal.js';

export type { CloseKind } from '../report/emf.js';

/**
 * Called once an item's record.json and final audit event are stored: brings
 * its evidence up to date (see refreshItemEvidence) and emits the item's
 * metrics.
 *
 * It never throws: the item's outcome is already recorded, and a failure here
 * must not make the workflow retry a step whose claim has moved on. A missing
 * page or seal entry is what `paperclip audit verify` reports.
 */
export async function recordClosedItem(ctx: EvidenceContext, item: ItemRef, close: CloseKind): Promise<void> {
  const { events, claim } = await refreshItemEvidence(ctx, item);
  try {
    if (claim) emitItemMetrics(classifyItem(claim, events), close);
  } catch (error) {
    warn(`metrics for ${item.key}`, error);
  }
}

export interface ItemRef {
  key: string;
  tenant: string;
  taskId: string;
}

/**
 * Rewrites an item's evidence page from its chain as it is now, and adds the
 * item to its batch's seal when the batch was already sealed (an approval
 * decided, or a write compensated, after the batch ended). While its batch
 * still runs, the page is left to the batch's end, which renders every item
 * page anyway. An item run
 * outside a batch (its task folder has no list.json, which a batch writes
 * before it starts any item) gets a seal of its own. Returns the chain
 * and claim it rendered from; never throws, for the reason recordClosedItem gives.
 *
 * Only the item's own folder is listed: this runs for every item, and listing
 * the whole batch folder each time would cost a batch of n items n² keys.
 * The few other objects the page depends on are looked up by name.
 */
export async function refreshItemEvidence(ctx: EvidenceContext, item: ItemRef): Promise<{ events: AuditEvent[]; claim?: Claim }> {
  const batch: BatchRef = { tenant: item.tenant, taskId: item.taskId };
  let events: AuditEvent[] = [];
  let claim: Claim | undefined;
  try {
    let sealed: boolean;
    let inBatch: boolean;
    [events, claim, sealed, inBatch] = await Promise.all([
      ctx.audit.events(item.key),
      ctx.claims.get(item.key),
      ctx.evidence.exists(batchKey(batch, SEAL_NAME)),
      ctx.evidence.exists(batchKey(batch, BATCH_LIST_NAME)),
    ]);
    // A batch still running renders every item's page at its end, with its siblings' and its own: rendering it
    // now as well would cost each item a listing and a page, only to be replaced.
    if (inBatch && !sealed) return { events, ...(claim ? { claim } : {}) };
    const linked = linkedItemKeys(events).filter((k) => k !== item.key);
    const [objects, batchPage, ...linkedPages] = await Promise.all([
      snapshotItemFolder(ctx, batch, item.key),
      ctx.evidence.exists(batchKey(batch, 'batch.json')),
      ...linked.map((k) => ctx.evidence.exists(evidenceKey({ ...batch, key: k }, PAGE_NAME))),
    ]);
    const siblingPages = new Set([item.key, ...linked.filter((_, i) => linkedPages[i])]);
    const recordsRead = new Map<string, OutcomeRecord | undefined>();
    const page = await storeItemPage(ctx, batch, item.key, {
      objects,
      events,
      ...(claim ? { claim } : {}),
      siblingPages,
      batchPage,
      recordsRead,
    });
    objects.set(PAGE_NAME, page);
    if (sealed) {
      const record = recordsRead.get(item.key);
      await addLateItem(ctx, batch, {
        key: item.key,
        events,
        objects,
        linked: [...siblingPages].filter((k) => k !== item.key),
        ...(claim ? { claim } : {}),
        ...(record ? { record } : {}),
      });
    } else if (!inBatch) {
      const described = claim ? { status: claim.status, billNo: claim.billNo, action: claim.action } : {};
      await sealStandaloneItem(ctx, batch, { key: item.key, events, objects, ...described }, claim?.identity ?? 'paperclip');
    }
  } catch (error) {
    warn(`evidence page for ${item.key}`, error);
  }
  return { events, ...(claim ? { claim } : {}) };
}

function warn(what: string, error: unknown): void {
  process.stderr.write(`paperclip: could not write the ${what}: ${(error as Error).message ?? String(error)}\n`);
}
