import { GENESIS_HASH, hashEvent, type AuditEvent } from '../domain/audit-chain.js';
import { eventsOfType } from '../domain/audit-events.js';
import { batchKey, evidenceKey } from '../app/ports/evidence.js';
import { batchChain, batchFolder, hashObject, SEAL_NAME, type BatchRef, type EvidenceContext } from './folder.js';
import { computeSealHash, loadSealState, loadStandaloneSeal, SEALED_EVENT, standaloneSealChain, type SealedItem } from './seal.js';
import { parseRecord } from './item-page.js';
import { verifyAnchors } from './anchors.js';
import { tenantsWithDigests, verifyDigestsOf } from './verify-digests.js';

/**
 * `paperclip audit verify`: recomputes every audit chain and the sha256 of
 * every evidence object, and compares them with the batch seal. Each finding
 * names exactly what differs: which event of which chain, which object.
 */

/**
 * `unreadable`: an object the seal lists as left out (no checksum recorded at upload, and the sealing role could
 * not read it): nothing protects it, and the seal says so, so verify says so too.
 */
export type FindingKind = 'altered' | 'removed' | 'added' | 'unsealed' | 'unreadable';

export interface Finding {
  kind: FindingKind;
  /** tenant/taskId */
  batch?: string;
  /** The audit chain (an idempotency key, or batch:<tenant>:<taskId>). */
  chain?: string;
  seq?: number;
  /** Full object key in the bucket. */
  object?: string;
  detail: string;
}

export interface VerifyResult {
  scope: string;
  findings: Finding[];
  /** Facts worth knowing that are not tampering (events appended after the seal, a claim expired by TTL). */
  notes: string[];
  checked: { batches: number; chains: number; events: number; objects: number };
}

function emptyResult(scope: string): VerifyResult {
  return { scope, findings: [], notes: [], checked: { batches: 0, chains: 0, events: 0, objects: 0 } };
}

/** Every problem in one chain, each at the event where it shows. */
export function checkChain(chain: string, events: readonly AuditEvent[]): Finding[] {
  const findings: Finding[] = [];
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  for (const event of events) {
    if (event.seq > expectedSeq) {
      const range = event.seq - 1 === expectedSeq ? `seq ${expectedSeq}` : `seq ${expectedSeq}–${event.seq - 1}`;
      findings.push({ kind: 'removed', chain, seq: expectedSeq, detail: `event ${range} of chain ${chain} removed` });
    }
    const { hash, ...body } = event;
    const contentChanged = hashEvent(body) !== hash;
    if (contentChanged) {
      findings.push({
        kind: 'altered',
        chain,
        seq: event.seq,
        detail: `event seq ${event.seq} (${String(event.type)}) of chain ${chain} altered: its content no longer matches its hash`,
      });
    } else if (event.prevHash !== prevHash && event.seq === expectedSeq) {
      findings.push({
        kind: 'altered',
        chain,
        seq: event.seq - 1,
        detail: `event seq ${event.seq - 1} of chain ${chain} altered and re-hashed: event seq ${event.seq} no longer links to it`,
      });
    }
    prevHash = hash;
    expectedSeq = event.seq + 1;
  }
  return findings;
}

async function currentHash(ctx: EvidenceContext, key: string): Promise<string | undefined> {
  return (await hashObject(ctx, key))?.sha256;
}

/** The sha256 each object had when a step stored it, as the (chained) events and record.json name it; the latest mention wins. */
function hashesAtStore(
  events: readonly AuditEvent[],
  record: { evidence?: Array<{ key: string; sha256: string }> } | undefined,
): Map<string, string> {
  const found = new Map<string, string>();
  const note = (entries: unknown) => {
    if (!Array.isArray(entries)) return;
    for (const e of entries) {
      if (
        e &&
        typeof e === 'object' &&
        typeof (e as { key?: unknown }).key === 'string' &&
        typeof (e as { sha256?: unknown }).sha256 === 'string'
      ) {
        found.set((e as { key: string }).key, (e as { sha256: string }).sha256);
      }
    }
  };
  for (const event of events) note(event.data?.['evidence']);
  note(record?.evidence);
  return found;
}

export async function verifyBatch(
  ctx: EvidenceContext,
  batch: BatchRef,
  options: {
    onlyKey?: string;
    /** The time digests are due by (tests); default now. */
    now?: number;
    /** Items known from their own seal chains (a task run outside a batch), checked even when their claim and folder are gone. */
    sealedKeys?: readonly string[];
    /** Collects the name of every chain checked (verifyAll checks the chains no batch covers after). */
    covered?: Set<string>;
  } = {},
): Promise<VerifyResult> {
  const label = `${batch.tenant}/${batch.taskId}`;
  const result = emptyResult(options.onlyKey ? `key ${options.onlyKey} (batch ${label})` : `batch ${label}`);
  result.checked.batches = 1;
  const add = (f: Omit<Finding, 'batch'>) => result.findings.push({ batch: label, ...f });
  const state = await loadSealState(ctx, batch);
  const sealObject = batchKey(batch, SEAL_NAME);

  result.checked.chains += 1;
  result.checked.events += state.chain.length;
  options.covered?.add(batchChain(batch));
  checkChain(batchChain(batch), state.chain).forEach(add);
  // Every seal the batch chain records must match its anchor outside the table.
  (await verifyAnchors(ctx, batch.tenant, state.chain, { now: options.now })).forEach(add);

  const sealedEvents = state.chain.filter((e) => e.type === SEALED_EVENT);
  // A task folder no batch sealed may still hold only items run outside a batch, each with its own seal.
  let neverSealed = false;
  if (!state.seal) {
    if (state.sealProblem === 'seal.json is missing') {
      if (sealedEvents.length > 0)
        add({
          kind: 'removed',
          object: sealObject,
          detail: `${sealObject} removed (the batch chain recorded ${sealedEvents.length} seal(s))`,
        });
      else neverSealed = true;
    } else {
      add({ kind: 'altered', object: sealObject, detail: `${sealObject} altered: ${state.sealProblem}` });
    }
  } else if (computeSealHash(state.seal) !== state.seal.sealHash) {
    add({ kind: 'altered', object: sealObject, detail: `${sealObject} altered: its content no longer matches its own sealHash` });
  } else if (!state.sealEvent) {
    add({
      kind: 'altered',
      object: sealObject,
      detail: `${sealObject} altered or replaced: its sealHash ${state.seal.sealHash.slice(0, 16)}… is not recorded in chain ${batchChain(batch)}`,
    });
  } else if (state.latestSealEvent && state.sealEvent.seq !== state.latestSealEvent.seq) {
    result.notes.push(
      `${sealObject} is the seal of event seq ${state.sealEvent.seq}; the chain's latest seal is seq ` +
        `${state.latestSealEvent.seq} (two runs of this task sealed at once); verified against seq ${state.sealEvent.seq}`,
    );
  }
  const manifest = state.manifest;
  for (const refused of manifest?.refused ?? []) {
    if (options.onlyKey && refused.key !== options.onlyKey) continue;
    add({
      kind: 'altered',
      chain: batchChain(batch),
      seq: refused.seq,
      detail:
        `event seq ${refused.seq} (item_sealed) of chain ${batchChain(batch)} ` +
        `${refused.problem} for item ${refused.key}; verified against the earlier sealed entry`,
    });
  }

  // An item run outside a batch: its own seal chain, checked like any chain, and what it seals.
  const standaloneEntries = new Map<string, SealedItem | undefined>();
  let unsealedItems = 0;
  const standaloneSeal = async (key: string) => {
    const own = await loadStandaloneSeal(ctx, key);
    if (own.chain.length === 0) return undefined;
    const chain = standaloneSealChain(key);
    options.covered?.add(chain);
    result.checked.chains += 1;
    result.checked.events += own.chain.length;
    checkChain(chain, own.chain).forEach(add);
    (await verifyAnchors(ctx, batch.tenant, own.chain, { now: options.now })).forEach(add);
    for (const refused of own.refused) {
      add({
        kind: 'altered',
        chain,
        seq: refused.seq,
        detail: `event seq ${refused.seq} (sealed) of chain ${chain} ${refused.problem}; verified against the earlier sealed entry`,
      });
    }
    return own;
  };

  // Item chains and objects against the seal.
  const claims = await ctx.claims.byTask(batch.taskId, batch.tenant);
  const keys = new Set<string>([...(manifest?.items.keys() ?? []), ...claims.map((c) => c.key), ...(options.sealedKeys ?? [])]);
  const listed = await ctx.evidence.list(batchFolder(batch));
  for (const key of listed) {
    const parts = key.slice(batchFolder(batch).length).split('/');
    if (parts.length === 2) keys.add(parts[0]!);
  }
  for (const key of [...keys].sort()) {
    if (options.onlyKey && key !== options.onlyKey) continue;
    const events = await ctx.audit.events(key);
    options.covered?.add(key);
    result.checked.chains += 1;
    result.checked.events += events.length;
    const chainFindings = checkChain(key, events);
    chainFindings.forEach(add);
    let sealed: SealedItem | undefined = manifest?.items.get(key);
    if (!sealed) {
      const own = await standaloneSeal(key);
      sealed = own?.entry;
      if (own) standaloneEntries.set(key, own.entry);
    }
    if (!sealed) {
      if (manifest)
        add({ kind: 'unsealed', chain: key, detail: `item ${key} is not in the seal of batch ${label}: its evidence is unprotected` });
      else unsealedItems += 1;
    } else {
      const reported = new Set(chainFindings.map((f) => f.seq));
      sealed.events.forEach((sealedHash, i) => {
        const seq = i + 1;
        const event = events.find((e) => e.seq === seq);
        if (!event) {
          if (!reported.has(seq) && !chainFindings.some((f) => f.kind === 'removed' && (f.seq ?? 0) <= seq)) {
            add({ kind: 'removed', chain: key, seq, detail: `event seq ${seq} of chain ${key} removed (it was sealed)` });
          }
        } else if (event.hash !== sealedHash && !reported.has(seq)) {
          add({
            kind: 'altered',
            chain: key,
            seq,
            detail: `event seq ${seq} (${event.type}) of chain ${key} altered: its hash differs from the sealed one`,
          });
        }
      });
      if (events.length > sealed.events.length) {
        result.notes.push(
          `chain ${key} has ${events.length - sealed.events.length} event(s) appended after the seal (${events
            .slice(sealed.events.length)
            .map((e) => e.type)
            .join(', ')})`,
        );
      }
      for (const object of sealed.objects) {
        const objectKey = evidenceKey({ ...batch, key }, object.name);
        result.checked.objects += 1;
        const now = await currentHash(ctx, objectKey);
        const finding = hashFinding(key, objectKey, now, object.sha256, {
          removed: (then) => `removed (sealed with sha256 ${then}…)`,
          altered: (current, then) => `altered: sha256 is ${current}…, sealed ${then}…`,
        });
        if (finding) add(finding);
      }
    }
    // Objects the steps named with their hash at the time they were stored (covers the time before the seal).
    const { record } = parseRecord(await ctx.evidence.get(evidenceKey({ ...batch, key }, 'record.json')));
    const reportedObjects = new Set(result.findings.map((f) => f.object).filter(Boolean));
    for (const [objectKey, atStore] of hashesAtStore(events, record)) {
      if (reportedObjects.has(objectKey) || !objectKey.startsWith(`${batchFolder(batch)}${key}/`)) continue;
      const now = await currentHash(ctx, objectKey);
      const finding = hashFinding(key, objectKey, now, atStore, {
        removed: (then) => `removed (recorded when stored with sha256 ${then}…)`,
        altered: (current, then) => `altered since it was stored: sha256 ${current}…, recorded ${then}…`,
      });
      if (finding) add(finding);
    }
    if (!claims.some((c) => c.key === key) && events.length > 0 && sealed?.status) {
      result.notes.push(
        `item ${key} has no claim any more (claims of finished items may expire by TTL); its chain and objects were checked`,
      );
    }
  }

  const topLevel = listed.filter((k) => !k.slice(batchFolder(batch).length).includes('/'));
  if (!manifest) {
    if (neverSealed && !options.onlyKey && (unsealedItems > 0 || topLevel.length > 0 || standaloneEntries.size === 0)) {
      add({
        kind: 'unsealed',
        object: sealObject,
        detail: `batch ${label} was never sealed: nothing protects its objects from being changed unnoticed`,
      });
    } else if (neverSealed && options.onlyKey && !standaloneEntries.get(options.onlyKey)) {
      add({ kind: 'unsealed', chain: options.onlyKey, detail: `item ${options.onlyKey} was never sealed: its evidence is unprotected` });
    }
    for (const objectKey of listed) {
      const [folder, name, ...deeper] = objectKey.slice(batchFolder(batch).length).split('/');
      const entry = folder ? standaloneEntries.get(folder) : undefined;
      if (!entry || name === undefined || (options.onlyKey && folder !== options.onlyKey)) continue;
      if (deeper.length === 0 && entry.objects.some((o) => o.name === name)) continue;
      add({
        kind: 'added',
        chain: folder!,
        object: objectKey,
        detail: `${objectKey} added: the item's own seal does not account for it (a stray object)`,
      });
    }
  }

  // Batch-level objects, and anything in the folder the seal does not account for.
  if (manifest) {
    if (!options.onlyKey) {
      for (const object of manifest.batchObjects.values()) {
        const objectKey = batchKey(batch, object.name);
        result.checked.objects += 1;
        const now = await currentHash(ctx, objectKey);
        if (now === undefined)
          add({ kind: 'removed', object: objectKey, detail: `${objectKey} removed (sealed with sha256 ${object.sha256.slice(0, 16)}…)` });
        else if (now !== object.sha256)
          add({
            kind: 'altered',
            object: objectKey,
            detail: `${objectKey} altered: sha256 is ${now.slice(0, 16)}…, sealed ${object.sha256.slice(0, 16)}…`,
          });
      }
    }
    // Objects the seal could not hash: each a finding of its own (not a stray object: the seal saw it and said so).
    const leftOut = new Set<string>();
    for (const entry of manifest.seal.unreadable ?? []) {
      const parts = entry.name.split('/');
      if (options.onlyKey && (parts.length !== 2 || parts[0] !== options.onlyKey)) continue;
      const objectKey = batchKey(batch, entry.name);
      leftOut.add(objectKey);
      add({
        kind: 'unreadable',
        ...(parts.length === 2 ? { chain: parts[0]! } : {}),
        object: objectKey,
        detail: `${objectKey} was left out of the seal: ${entry.reason} (nothing protects it; record its checksum at upload or remove it)`,
      });
    }
    for (const objectKey of listed) {
      const relative = objectKey.slice(batchFolder(batch).length);
      const parts = relative.split('/');
      if (options.onlyKey && parts[0] !== options.onlyKey) continue;
      if (leftOut.has(objectKey)) continue;
      const known =
        (parts.length === 1 && (parts[0] === SEAL_NAME || manifest.batchObjects.has(parts[0]!))) ||
        (parts.length === 2 && manifest.items.get(parts[0]!)?.objects.some((o) => o.name === parts[1]));
      if (!known) {
        const chain = parts.length === 2 ? parts[0]! : undefined;
        add({
          kind: 'added',
          ...(chain ? { chain } : {}),
          object: objectKey,
          detail: `${objectKey} added: the seal does not account for it (a stray object)`,
        });
      }
    }
  }
  return result;
}

/** Verifies one write: its chain, and its folder against its batch's seal. */
export async function verifyKey(ctx: EvidenceContext, key: string, options: { now?: number } = {}): Promise<VerifyResult> {
  const claim = await ctx.claims.get(key);
  const events = await ctx.audit.events(key);
  const routed = eventsOfType(events, 'routed')[0]?.data.item;
  const tenant = claim?.tenant ?? routed?.tenant;
  const taskId = claim?.taskId ?? routed?.taskId;
  if (tenant && taskId) return verifyBatch(ctx, { tenant, taskId }, { ...options, onlyKey: key });
  const result = emptyResult(`key ${key}`);
  if (events.length === 0) {
    result.findings.push({
      kind: 'removed',
      chain: key,
      detail: `no claim and no audit events for ${key}: unknown key, or its whole chain was removed`,
    });
    return result;
  }
  result.checked.chains = 1;
  result.checked.events = events.length;
  result.findings.push(...checkChain(key, events));
  result.notes.push(`${key} has no claim and names no batch; only its chain was checked`);
  return result;
}

/**
 * Every batch: folders in the bucket, batch chains in the audit table (so a batch whose folder is gone is found
 * too), and the tasks that items run outside a batch name in their own seal chains (`<key>:seal`; such a task
 * has no batch chain, so without them a task whose folder is gone would be skipped unnoticed).
 */
export async function listBatches(ctx: EvidenceContext, tenant?: string): Promise<BatchRef[]> {
  return [...(await batchesAndSealedKeys(ctx, tenant)).values()].map((b) => b.batch);
}

async function batchesAndSealedKeys(
  ctx: EvidenceContext,
  tenant?: string,
): Promise<Map<string, { batch: BatchRef; sealedKeys: string[] }>> {
  const found = new Map<string, BatchRef>();
  const folders = (prefix: string) => ctx.evidence.folders(prefix);
  const tenants = tenant ? [`evidence/${tenant}/`] : await folders('evidence/');
  for (const t of tenants) {
    for (const task of await folders(t)) {
      const [, tenantId, taskId] = task.split('/');
      if (tenantId && taskId) found.set(`${tenantId}/${taskId}`, { tenant: tenantId, taskId });
    }
  }
  for (const chain of await ctx.audit.chainsStartingWith(tenant ? `batch:${tenant}:` : 'batch:')) {
    const [, tenantId, ...rest] = chain.split(':');
    const taskId = rest.join(':');
    if (tenantId && taskId) found.set(`${tenantId}/${taskId}`, { tenant: tenantId, taskId });
  }
  const sealedKeys = new Map<string, string[]>();
  for (const chain of await ctx.audit.chainsStartingWith(tenant ? `k-${tenant}_` : 'k-')) {
    if (!chain.endsWith(SEAL_CHAIN_SUFFIX)) continue;
    const data = (await ctx.audit.events(chain))[0]?.data;
    const [tenantId, taskId] = [data?.['tenant'], data?.['taskId']];
    if (typeof tenantId !== 'string' || typeof taskId !== 'string' || (tenant && tenantId !== tenant)) continue;
    const label = `${tenantId}/${taskId}`;
    found.set(label, { tenant: tenantId, taskId });
    sealedKeys.set(label, [...(sealedKeys.get(label) ?? []), chain.slice(0, -SEAL_CHAIN_SUFFIX.length)]);
  }
  const sorted = [...found.entries()].sort(([a], [b]) => a.localeCompare(b));
  return new Map(sorted.map(([label, batch]) => [label, { batch, sealedKeys: sealedKeys.get(label) ?? [] }]));
}

const SEAL_CHAIN_SUFFIX = standaloneSealChain('');

export async function verifyAll(ctx: EvidenceContext, tenant?: string, options: { now?: number } = {}): Promise<VerifyResult> {
  const total = emptyResult(tenant ? `every batch of ${tenant}` : 'every batch');
  const found = [...(await batchesAndSealedKeys(ctx, tenant)).values()];
  const batches = found.map((b) => b.batch);
  // Each tenant's daily digests once: a signed digest for every day since its first seal, linking the anchors of every batch and item.
  const tenants = tenant
    ? [tenant]
    : await tenantsWithDigests(
        ctx,
        batches.map((b) => b.tenant),
      );
  const digests = await verifyDigestsOf(ctx, tenants, options);
  total.findings.push(...digests.findings);
  total.notes.push(...digests.notes);
  const covered = new Set<string>();
  for (const { batch, sealedKeys } of found) {
    const one = await verifyBatch(ctx, batch, { ...options, sealedKeys, covered });
    total.findings.push(...one.findings);
    total.notes.push(...one.notes);
    total.checked.batches += one.checked.batches;
    total.checked.chains += one.checked.chains;
    total.checked.events += one.checked.events;
    total.checked.objects += one.checked.objects;
  }
  await verifyUncoveredChains(ctx, total, covered, tenant);
  return total;
}

/**
 * Every chain, not only those a batch leads to: a write whose task has no batch folder, claim or seal (rejected
 * before it was claimed, or run outside a batch and never sealed) still has its chain, and a chain is checked
 * wherever it is. Each one found here is hash-checked and named in a note, since no seal covers its evidence.
 */
async function verifyUncoveredChains(
  ctx: EvidenceContext,
  total: VerifyResult,
  covered: ReadonlySet<string>,
  tenant?: string,
): Promise<void> {
  const prefixes = tenant ? [`k-${tenant}_`, `batch:${tenant}:`] : ['k-', 'batch:'];
  const chains = [...new Set((await Promise.all(prefixes.map((p) => ctx.audit.chainsStartingWith(p)))).flat())].sort();
  for (const chain of chains.filter((c) => !covered.has(c))) {
    const events = await ctx.audit.events(chain);
    total.checked.chains += 1;
    total.checked.events += events.length;
    total.findings.push(...checkChain(chain, events));
    total.notes.push(`chain ${chain} belongs to no batch or seal: its events were checked, no seal covers its evidence`);
  }
}

/**
 * The finding for an object whose sha256 is now `now` (undefined: the object is
 * gone) where `expected` was recorded; undefined when they agree. Hashes are
 * shown by their first 16 hex digits.
 */
function hashFinding(
  chain: string,
  object: string,
  now: string | undefined,
  expected: string,
  say: { removed(then: string): string; altered(current: string, then: string): string },
): Omit<Finding, 'batch'> | undefined {
  const then = expected.slice(0, 16);
  if (now === undefined) return { kind: 'removed', chain, object, detail: `${object} ${say.removed(then)}` };
  if (now !== expected) return { kind: 'altered', chain, object, detail: `${object} ${say.altered(now.slice(0, 16), then)}` };
  return undefined;
}
