import { z } from 'zod';
import { canonicalJson, type AuditEvent } from '../domain/audit-chain.js';
import { TERMINAL_STATUSES, type ClaimStatus } from '../domain/claim.js';
import {
  Hex64,
  ItemSealedData as ItemSealedEvent,
  SealedItem,
  SealedObject,
  StandaloneSealData as StandaloneSealEvent,
} from '../domain/audit-events.js';
import { batchKey } from '../app/ports/evidence.js';
import { anchorSealEvent } from './anchors.js';
import {
  batchChain,
  PAGE_NAME,
  parseFolderJson,
  SEAL_NAME,
  sha256Hex,
  type BatchFolderSnapshot,
  type BatchRef,
  type EvidenceContext,
  type HashedObject,
} from './folder.js';

/**
 * The batch seal: at the end of a batch, one document records every item's
 * audit chain (each event hash up to the head) and the sha256 of every object
 * in the batch folder; the seal's own hash goes into the batch's audit chain.
 * Items that close later (an approval decided after the batch ended) are
 * added by `item_sealed` events in the same chain.
 *
 * A later seal of the same batch (a re-run of the task) never re-hashes what
 * an earlier one fixed: an item that was already terminal keeps its sealed
 * objects and event hashes, so re-running a task cannot launder an edit.
 */

// The sealed shapes are part of the sealing events' schemas (src/domain/audit-events.ts), defined there once.
export { SealedItem, SealedObject };

export const Seal = z.strictObject({
  version: z.literal(1),
  tenant: z.string(),
  taskId: z.string(),
  chain: z.string(),
  sealedAt: z.string(),
  sealedBy: z.string(),
  /** Objects directly in the batch folder, seal.json excluded. */
  batchObjects: z.array(SealedObject),
  items: z.array(SealedItem),
  /** Objects of the folder the seal could not hash (no checksum recorded at upload, and not readable): findings, never dropped silently. */
  unreadable: z.array(z.strictObject({ name: z.string().min(1), reason: z.string() })).optional(),
  /** sha256 of the canonical JSON of every other field. */
  sealHash: Hex64,
});
export type Seal = z.infer<typeof Seal>;

export const SEALED_EVENT = 'sealed';
export const ITEM_SEALED_EVENT = 'item_sealed';

// Read as every stored event is read: extra fields do not unseal an addendum (src/domain/audit-events.ts).
const ItemSealedData = ItemSealedEvent.loose();

export function computeSealHash(seal: Omit<Seal, 'sealHash'> | Seal): string {
  const { sealHash: _ignored, ...body } = seal as Seal;
  return sha256Hex(canonicalJson(body));
}

const toSealed = (o: HashedObject): SealedObject => ({ name: o.name, sha256: o.sha256, bytes: o.bytes });
const isTerminal = (status: string | undefined) => status !== undefined && TERMINAL_STATUSES.includes(status as ClaimStatus);

/** What the seal and its later additions say the folder must hold. */
export interface Manifest {
  seal: Seal;
  batchObjects: Map<string, SealedObject>;
  items: Map<string, SealedItem>;
  /** Seq of the batch-chain event that recorded the seal. */
  sealedAtSeq: number;
  /**
   * `item_sealed` entries that tried to replace what was sealed for a finished
   * item other than by the documented extension; the earlier entry stays in force.
   */
  refused: Array<{ seq: number; key: string; problem: string }>;
}

/**
 * Why a later `item_sealed` entry may not replace the sealed entry of an item
 * that was already terminal, or undefined when it is the documented extension:
 * the item's chain grew (every sealed event hash kept, in order, new ones
 * appended), its status, bill and action are unchanged, and every sealed
 * object keeps its hash except the page, which is re-rendered from the grown
 * chain. Anything else would let whoever can append to the batch chain
 * launder a rewritten item chain or a swapped object.
 */
export function replacementProblem(sealed: SealedItem, next: SealedItem): string | undefined {
  if (!isTerminal(sealed.status)) return undefined;
  const answered = reopens(sealed);
  if (next.status !== sealed.status && !answered) return `changes the sealed status ${sealed.status} to ${next.status ?? 'none'}`;
  if (next.billNo !== sealed.billNo || next.action !== sealed.action) return 'changes the sealed bill or action';
  const kept = sealed.events.every((hash, i) => next.events[i] === hash);
  if (!kept) return "rewrites event hashes that were sealed (a finished item's chain only grows)";
  const grown = next.events.length > sealed.events.length;
  // The same entry again (a close that ran twice, re-sealing from the item's own chain and folder) changes nothing.
  if (!grown) return sameEntry(sealed, next) ? undefined : 're-seals a finished item whose chain did not grow';
  const nextObjects = new Map(next.objects.map((o) => [o.name, o]));
  for (const object of sealed.objects) {
    const now = nextObjects.get(object.name);
    if (!now) return `drops the sealed object ${object.name}`;
    // An operator's retry of a takeover item runs the write's steps again: its readback picture, its record
    // (and, when it clicks, its after picture and trace) are stored anew. Each new object's hash is in the grown
    // chain's events, which verify checks too; the sealed versions stay in the locked bucket's history.
    if (now.sha256 !== object.sha256 && object.name !== PAGE_NAME && !answered) return `replaces the sealed object ${object.name}`;
  }
  const added = next.objects.find((o) => !sealed.objects.some((p) => p.name === o.name));
  if (added && !answered) return `adds ${added.name} to a finished item`;
  return undefined;
}

/**
 * Whether a sealed item's status is an open question rather than an end: a TAKEOVER item waits for an
 * operator, whose answer (done, abandon, or a retry through the guarded path) closes it later, after its
 * batch was sealed. Its entry may then change status and objects, but only together with a chain that grew
 * from the sealed one (the resolution and what followed it are appended to the sealed events).
 */
function reopens(sealed: SealedItem): boolean {
  return sealed.status === 'TAKEOVER';
}

function sameEntry(sealed: SealedItem, next: SealedItem): boolean {
  if (next.status !== sealed.status) return false;
  if (next.events.length !== sealed.events.length || next.objects.length !== sealed.objects.length) return false;
  const nextObjects = new Map(next.objects.map((o) => [o.name, o]));
  return sealed.objects.every((o) => nextObjects.get(o.name)?.sha256 === o.sha256 && nextObjects.get(o.name)?.bytes === o.bytes);
}

export function manifestOf(seal: Seal, sealedAtSeq: number, later: readonly AuditEvent[]): Manifest {
  const manifest: Manifest = {
    seal,
    sealedAtSeq,
    batchObjects: new Map(seal.batchObjects.map((o) => [o.name, o])),
    items: new Map(seal.items.map((i) => [i.key, i])),
    refused: [],
  };
  for (const event of later) {
    if (event.type !== ITEM_SEALED_EVENT || event.seq <= sealedAtSeq) continue;
    const data = ItemSealedData.safeParse(event.data);
    if (!data.success) continue;
    for (const item of data.data.items) {
      const sealed = manifest.items.get(item.key);
      const problem = sealed && replacementProblem(sealed, item);
      if (problem) manifest.refused.push({ seq: event.seq, key: item.key, problem });
      else manifest.items.set(item.key, item);
    }
    for (const object of data.data.batchObjects) manifest.batchObjects.set(object.name, object);
  }
  return manifest;
}

export interface SealState {
  chain: AuditEvent[];
  /** seal.json parsed, or why it could not be. */
  seal?: Seal;
  sealProblem?: string;
  /** The `sealed` event whose hash equals seal.json's, if any. */
  sealEvent?: AuditEvent;
  latestSealEvent?: AuditEvent;
  manifest?: Manifest;
}

export function parseSeal(body: Buffer | undefined): { seal?: Seal; problem?: string } {
  if (!body) return { problem: 'seal.json is missing' };
  const parsed = parseFolderJson(SEAL_NAME, body, Seal);
  return parsed.ok ? { seal: parsed.value } : { problem: parsed.problem };
}

export async function loadSealState(ctx: EvidenceContext, batch: BatchRef): Promise<SealState> {
  const chain = await ctx.audit.events(batchChain(batch));
  const { seal, problem } = parseSeal(await ctx.evidence.get(batchKey(batch, SEAL_NAME)));
  const sealEvents = chain.filter((e) => e.type === SEALED_EVENT);
  const state: SealState = { chain, latestSealEvent: sealEvents.at(-1) };
  if (problem) state.sealProblem = problem;
  if (!seal) return state;
  state.seal = seal;
  // A seal whose content does not hash to its own sealHash vouches for nothing.
  if (computeSealHash(seal) !== seal.sealHash) return state;
  state.sealEvent = sealEvents.findLast((e) => e.data['sealHash'] === seal.sealHash);
  if (state.sealEvent) state.manifest = manifestOf(seal, state.sealEvent.seq, chain);
  return state;
}

/** The sealed entry of one item: its chain's hashes and its folder's objects, carrying forward what an earlier seal fixed. */
export function sealedItem(
  key: string,
  input: { events: readonly AuditEvent[]; objects: ReadonlyMap<string, HashedObject>; status?: string; billNo?: string; action?: string },
  previous?: SealedItem,
  options: { pageRendered?: boolean } = {},
): SealedItem {
  const hashes = input.events.map((e) => e.hash);
  // A takeover item whose chain grew was answered by an operator since (see reopens): its entry is made afresh.
  const answered = previous !== undefined && reopens(previous) && hashes.length > previous.events.length;
  if (previous && isTerminal(previous.status) && !answered) {
    // What was sealed stays sealed, except a page the caller has just rendered from a chain that grew
    // after the seal (the write was undone later): the page is a view of the chain, so it follows it.
    const page = input.objects.get(PAGE_NAME);
    const grown = hashes.length > previous.events.length;
    const objects =
      options.pageRendered && grown && page ? previous.objects.map((o) => (o.name === PAGE_NAME ? toSealed(page) : o)) : previous.objects;
    return { ...previous, events: [...previous.events, ...hashes.slice(previous.events.length)], objects };
  }
  return {
    key,
    ...(input.billNo ? { billNo: input.billNo } : {}),
    ...(input.action ? { action: input.action } : {}),
    ...(input.status ? { status: input.status } : {}),
    events: hashes,
    objects: [...input.objects.values()].sort((a, b) => a.name.localeCompare(b.name)).map(toSealed),
  };
}

export interface ItemForSeal {
  key: string;
  events: readonly AuditEvent[];
  status?: string;
  billNo?: string;
  action?: string;
}

/** Builds the seal of a batch folder as snapshotted. */
export function buildSeal(
  batch: BatchRef,
  snapshot: BatchFolderSnapshot,
  items: readonly ItemForSeal[],
  sealedBy: string,
  previous?: Manifest,
): Seal {
  const body: Omit<Seal, 'sealHash'> = {
    version: 1,
    tenant: batch.tenant,
    taskId: batch.taskId,
    chain: batchChain(batch),
    sealedAt: new Date().toISOString(),
    sealedBy,
    batchObjects: [...snapshot.top.values()]
      .filter((o) => o.name !== SEAL_NAME)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map(toSealed),
    items: [...items]
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((item) => sealedItem(item.key, { ...item, objects: snapshot.items.get(item.key) ?? new Map() }, previous?.items.get(item.key))),
    ...(snapshot.unreadable.length > 0 ? { unreadable: snapshot.unreadable } : {}),
  };
  return { ...body, sealHash: computeSealHash(body) };
}

/** Stores seal.json and records its hash in the batch chain. */
export async function writeSeal(ctx: EvidenceContext, seal: Seal): Promise<AuditEvent> {
  const batch = { tenant: seal.tenant, taskId: seal.taskId };
  await ctx.evidence.put(batchKey(batch, SEAL_NAME), JSON.stringify(seal, null, 2), 'application/json');
  const event = await ctx.audit.append(batchChain(batch), {
    type: SEALED_EVENT,
    actor: seal.sealedBy,
    data: {
      sealHash: seal.sealHash,
      seal: batchKey(batch, SEAL_NAME),
      items: seal.items.length,
      objects: seal.batchObjects.length + seal.items.reduce((n, i) => n + i.objects.length, 0),
    },
  });
  await anchor(ctx, seal.tenant, event);
  return event;
}

/**
 * Adds items to an existing seal (they closed after it was made), together
 * with the re-rendered batch page. Items the seal already holds as terminal
 * are left as sealed unless their chain grew since (a write undone later):
 * then the new events and the page rendered from them are added.
 */
export async function supplementSeal(
  ctx: EvidenceContext,
  manifest: Manifest,
  additions: Array<ItemForSeal & { objects: ReadonlyMap<string, HashedObject> }>,
  batchPage: HashedObject | undefined,
  actor: string,
  options: { replaceTerminal?: boolean } = {},
): Promise<AuditEvent | undefined> {
  // Right after sealing, an item that closed while the folder was hashed is re-read in full;
  // later, an item the seal holds as terminal is never re-hashed, only extended when its chain grew
  // (its caller has just rendered its page from that chain).
  const items = additions
    .filter((a) => {
      const sealed = manifest.items.get(a.key);
      return options.replaceTerminal || !isTerminal(sealed?.status) || a.events.length > (sealed?.events.length ?? 0);
    })
    .map((a) => (options.replaceTerminal ? sealedItem(a.key, a) : sealedItem(a.key, a, manifest.items.get(a.key), { pageRendered: true })));
  if (items.length === 0 && !batchPage) return undefined;
  const batch = { tenant: manifest.seal.tenant, taskId: manifest.seal.taskId };
  const event = await ctx.audit.append(batchChain(batch), {
    type: ITEM_SEALED_EVENT,
    actor,
    data: { basedOn: manifest.seal.sealHash, items, batchObjects: batchPage ? [toSealed(batchPage)] : [] },
  });
  await anchor(ctx, batch.tenant, event);
  return event;
}

export { PAGE_NAME };

/**
 * A write started on the workflow directly (not by a batch) has no batch to
 * seal it, so it gets a seal of its own when it closes: an entry of the same
 * shape as a batch seal's item, recorded as a `sealed` event in the chain
 * `<key>:seal` (a chain of its own, so the sealing never appends to the
 * chain it seals, and under the tenant's key prefix). A later seal of the
 * same item (it was compensated after it closed) must be the documented
 * extension of the first (replacementProblem), or verify reports it.
 */
export function standaloneSealChain(key: string): string {
  return `${key}:seal`;
}

const StandaloneSealData = StandaloneSealEvent.loose();
type StandaloneSealData = z.infer<typeof StandaloneSealData>;

export function standaloneSealHash(data: Omit<StandaloneSealData, 'sealHash'>): string {
  return sha256Hex(canonicalJson({ tenant: data.tenant, taskId: data.taskId, item: data.item }));
}

export interface StandaloneSeal {
  chain: AuditEvent[];
  /** The item's sealed entry in force (the first seal, as extended by later ones). */
  entry?: SealedItem;
  /** Every seal hash the chain recorded, in order (each is anchored outside the table). */
  sealHashes: string[];
  /** Later seals that were not the documented extension, and seals whose hash does not match their content. */
  refused: Array<{ seq: number; problem: string }>;
}

export async function loadStandaloneSeal(ctx: Pick<EvidenceContext, 'audit'>, key: string): Promise<StandaloneSeal> {
  const chain = await ctx.audit.events(standaloneSealChain(key));
  const state: StandaloneSeal = { chain, sealHashes: [], refused: [] };
  for (const event of chain) {
    if (event.type !== SEALED_EVENT) continue;
    const data = StandaloneSealData.safeParse(event.data);
    if (!data.success || data.data.item.key !== key) {
      state.refused.push({ seq: event.seq, problem: 'is not a seal of this item' });
      continue;
    }
    if (standaloneSealHash(data.data) !== data.data.sealHash) {
      state.refused.push({ seq: event.seq, problem: 'holds an entry that does not hash to its sealHash' });
      continue;
    }
    state.sealHashes.push(data.data.sealHash);
    const problem = state.entry && replacementProblem(state.entry, data.data.item);
    if (problem) state.refused.push({ seq: event.seq, problem });
    else state.entry = data.data.item;
  }
  return state;
}

/**
 * Seals one item run outside a batch, from its own folder only. An item
 * already sealed as terminal is sealed again only when its chain grew (the
 * page the caller just rendered follows the chain); otherwise nothing is appended.
 */
export async function sealStandaloneItem(
  ctx: EvidenceContext,
  batch: BatchRef,
  input: ItemForSeal & { objects: ReadonlyMap<string, HashedObject> },
  actor: string,
): Promise<AuditEvent | undefined> {
  const previous = (await loadStandaloneSeal(ctx, input.key)).entry;
  if (previous && isTerminal(previous.status) && input.events.length <= previous.events.length) return undefined;
  const item = sealedItem(input.key, input, previous, { pageRendered: true });
  const body = { tenant: batch.tenant, taskId: batch.taskId, item };
  const event = await ctx.audit.append(standaloneSealChain(input.key), {
    type: SEALED_EVENT,
    actor,
    data: { ...body, sealHash: standaloneSealHash(body) },
  });
  await anchor(ctx, batch.tenant, event);
  return event;
}

/** Anchors a sealing event; a failure is logged, not thrown: the seal stands, and verify reports the missing anchor. */
export async function anchor(ctx: EvidenceContext, tenant: string, event: AuditEvent): Promise<void> {
  try {
    await anchorSealEvent(ctx, tenant, event);
  } catch (error) {
    process.stderr.write(`paperclip: could not anchor event ${event.seq} of ${event.chain}: ${(error as Error).message}\n`);
  }
}
