import { deadline, pollUntil } from '../lib/deadline.js';
import type { AuditEvent } from '../domain/audit-chain.js';
import { isEvent } from '../domain/audit-events.js';
import type { Claim } from '../domain/claim.js';
import { batchKey } from '../app/ports/evidence.js';
import { patchBatchPage, type BatchPageItem } from './batch-page.js';
import { batchChain, PAGE_NAME, S3_FAN_OUT, sha256Hex, type BatchRef, type EvidenceContext, type HashedObject } from './folder.js';
import { compensatesOf } from './item-page.js';
import { mapBounded } from '../lib/map-bounded.js';
import { buildBatchPage, hashTopObjects, indexBatchFolder, readRecord } from './pages.js';
import { anchor, ITEM_SEALED_EVENT, SEALED_EVENT, sealedItem } from './seal.js';

/**
 * An item that closes after its batch was sealed (an approval decided, a
 * write undone later) is added to the seal by one `item_sealed` addendum in
 * the batch chain: the item's entry, made from its own chain and folder, and
 * the batch page's new hash. Each addendum is chained to the one before by the
 * batch chain's hashes and anchored like the seal, so the seal only grows.
 *
 * The work is the closing item's own, whatever the batch's size: its chain and
 * folder (read by the caller), the batch chain's head (one query), the batch
 * page (one read and one write, its own row and its linked item's replaced in
 * place), and the rows' sources for the one item it is linked to (the write it
 * undoes, or the inverse that undid it). No other item's chain, record or claim
 * is read, and the batch folder is not listed; `audit verify` still checks the
 * whole batch against the seal and every addendum.
 *
 * The entry is made fresh rather than carried forward from the seal (which
 * would mean reading a seal.json of every item): for a finished item the seal
 * held, verify accepts it only as the documented extension of what was sealed
 * (manifestOf, replacementProblem), so an edit made since is still named.
 *
 * Two items of one batch closing at once both rewrite the batch page. The
 * addendum is appended only on top of the head this close read, and the page
 * is patched only from the page that head recorded, then stored after the
 * append: a close that loses the race reads the new head and waits for the
 * winner's page. A page that never arrives (its close died between append and
 * store) or has no row markers (rendered before they existed) is rendered in
 * full from every item, as the batch's end renders it.
 */

/** Appends attempted before giving up: each lost one means another close of the same batch appended first. */
const APPEND_ATTEMPTS = 10;
/** How long a close waits for the page the chain's head recorded (a concurrent close stores it right after its append). */
const PAGE_WAIT_MS = 2_000;
const PAGE_POLL_MS = 100;

export interface LateItem {
  key: string;
  events: readonly AuditEvent[];
  claim?: Claim;
  /** The item's folder as it is now, its just-stored page included. */
  objects: ReadonlyMap<string, HashedObject>;
  /** The item's record.json as its page read it. */
  record?: BatchPageItem['record'];
  /** Linked items (compensated write, or its inverse) whose page exists in the batch folder. */
  linked: readonly string[];
}

/** What a batch chain's event says the seal in force is, or undefined when the event is not a seal or an addendum. */
function sealHashOf(event: AuditEvent | undefined): string | undefined {
  if (isEvent(event, SEALED_EVENT)) return event.data.sealHash;
  if (isEvent(event, ITEM_SEALED_EVENT)) return event.data.basedOn;
  return undefined;
}

/** The batch page hash an addendum recorded; undefined for the seal itself and for addenda without a page. */
function pageHashOf(event: AuditEvent): string | undefined {
  if (!isEvent(event, ITEM_SEALED_EVENT)) return undefined;
  return event.data.batchObjects?.find((o) => o.name === PAGE_NAME)?.sha256;
}

/**
 * Adds a closed item to its batch's seal (see above). Returns the appended addendum, or undefined when the batch
 * chain holds no seal to build on (verify reports that batch; nothing is added to it).
 */
export async function addLateItem(ctx: EvidenceContext, batch: BatchRef, item: LateItem): Promise<AuditEvent | undefined> {
  const chain = batchChain(batch);
  const entry = sealedItem(item.key, {
    events: item.events,
    objects: item.objects,
    ...(item.claim ? { status: item.claim.status, billNo: item.claim.billNo, action: item.claim.action } : {}),
  });
  const rows = await rowsOf(ctx, batch, item);
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
    const head = await ctx.audit.head(chain);
    const basedOn = sealHashOf(head);
    if (!head || !basedOn) return undefined;
    const page = (await patchedPage(ctx, batch, head, rows)) ?? (await fullPage(ctx, batch));
    const event = await ctx.audit.appendAfter(chain, head, {
      type: ITEM_SEALED_EVENT,
      actor: item.claim?.identity ?? 'paperclip',
      data: { basedOn, items: [entry], batchObjects: [{ name: PAGE_NAME, sha256: sha256Hex(page), bytes: Buffer.byteLength(page) }] },
    });
    if (!event) continue; // another close of this batch appended first: build on its page
    await ctx.evidence.put(batchKey(batch, PAGE_NAME), page, 'text/html; charset=utf-8');
    await anchor(ctx, batch.tenant, event);
    return event;
  }
  throw new Error(`the batch chain ${chain} is contended: ${APPEND_ATTEMPTS} other closes appended first; ${item.key} is not in the seal`);
}

/** The rows this close changes: its own, and the linked item's (whose "undone by" mark or link it moves). */
async function rowsOf(ctx: EvidenceContext, batch: BatchRef, item: LateItem): Promise<BatchPageItem[]> {
  const compensates = compensatesOf(item.events);
  const own: BatchPageItem = {
    key: item.key,
    hasPage: true,
    ...(item.claim ? { claim: item.claim } : {}),
    ...(item.record ? { record: item.record } : {}),
    ...(compensates ? { compensates } : {}),
  };
  const linked = await Promise.all(
    item.linked.map(async (key): Promise<BatchPageItem> => {
      const [claim, events, { record }] = await Promise.all([ctx.claims.get(key), ctx.audit.events(key), readRecord(ctx, batch, key)]);
      const undoes = compensatesOf(events);
      return { key, hasPage: true, ...(claim ? { claim } : {}), ...(record ? { record } : {}), ...(undoes ? { compensates: undoes } : {}) };
    }),
  );
  return [own, ...linked];
}

/**
 * The stored batch page with these rows replaced, once it is the page the head recorded; undefined when it cannot
 * be patched (no page, no row markers, or the head's page did not arrive in time).
 */
async function patchedPage(
  ctx: EvidenceContext,
  batch: BatchRef,
  head: AuditEvent,
  rows: readonly BatchPageItem[],
): Promise<string | undefined> {
  const expected = pageHashOf(head);
  let stored: Buffer | undefined;
  const recorded = () => stored !== undefined && (expected === undefined || sha256Hex(stored) === expected);
  // A missing page is not waited for; one that is not yet the recorded one may still be on its way.
  await pollUntil(
    deadline(PAGE_WAIT_MS),
    async () => {
      stored = await ctx.evidence.get(batchKey(batch, PAGE_NAME));
      return stored === undefined || recorded();
    },
    PAGE_POLL_MS,
  );
  if (stored !== undefined && recorded()) return patchBatchPage(stored.toString('utf8'), rows);
  process.stderr.write(
    `paperclip: the batch page of ${batch.tenant}/${batch.taskId} is ${stored ? 'not the one its chain recorded' : 'missing'}; rendering it in full\n`,
  );
  return undefined;
}

/** The batch page rendered from every item, as the batch's end renders it: the fallback, whose cost grows with the batch. */
async function fullPage(ctx: EvidenceContext, batch: BatchRef): Promise<string> {
  const claims = (await ctx.claims.byTask(batch.taskId)).filter((c) => c.tenant === batch.tenant);
  const index = await indexBatchFolder(ctx, batch);
  const keys = [...index.keys];
  const chains = await mapBounded(keys, S3_FAN_OUT, (key) => ctx.audit.events(key));
  const compensates = new Map<string, string>();
  keys.forEach((key, i) => {
    const undone = compensatesOf(chains[i]!);
    if (undone) compensates.set(key, undone);
  });
  const top = await hashTopObjects(
    ctx,
    batch,
    [...index.top].filter((n) => n !== PAGE_NAME),
  );
  return buildBatchPage(ctx, batch, { claims, index, top, compensates, sealed: true });
}
