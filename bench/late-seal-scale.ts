import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { WiredServices } from '../src/composition/services.js';
import { batchKey, evidenceKey } from '../src/app/ports/evidence.js';
import { GENESIS_HASH, sealEvent, type AuditEvent } from '../src/domain/audit-chain.js';
import type { Claim, ClaimStatus } from '../src/domain/claim.js';
import { idempotencyKey } from '../src/domain/task.js';
import { renderBatchPage } from '../src/evidence/batch-page.js';
import { sha256Hex, type BatchRef, type HashedObject } from '../src/evidence/folder.js';
import { refreshItemEvidence } from '../src/evidence/item-closed.js';
import { buildSeal, writeSeal } from '../src/evidence/seal.js';
import { mapBounded } from '../src/lib/map-bounded.js';
import { verifyBatch } from '../src/evidence/verify.js';
import { logger } from '../src/observability/telemetry.js';
import { runStandalone } from './standalone.js';
import { startLocalServices, type LocalServices } from './local-services.js';
import type { AuditEventType } from '../src/domain/audit-events.js';
import { sampleEvent } from '../test/support/audit-events.js';

/**
 * A late close in a sealed batch of N items: the batch is seeded on the local
 * stack as the batch's end leaves it (every item's claim, audit chain and
 * record.json, list.json, batch.json, the batch page, seal.json and its
 * `sealed` event with its anchor), written directly rather than by running N
 * items, so 10,000 take seconds. One item was sealed while it waited for an
 * approval, one finished write is undone later by an inverse. Then three
 * items close after the seal, as the Complete function closes them: the
 * approved item, the inverse, and the undone write re-rendered with its
 * rollback. Each close's SDK calls are counted by a middleware on the
 * services' own clients, and its wall time, CPU and heap measured.
 */

export const TENANT = 'acme';
const ACTION = 'mark_processed';
const INVERSE_ACTION = 'reopen';
const SEED_FAN_OUT = 16;
const PICTURE = Buffer.alloc(24 * 1024, 7);

export interface SealedBatchFixture {
  batch: BatchRef;
  /** Sealed while it waited for an approval; closes later. */
  approvalKey: string;
  /** Sealed as done; undone later by `inverseKey`. */
  undoneKey: string;
  inverseKey: string;
}

export interface CloseCost {
  /** DynamoDB and S3 requests the close sent, by command name. */
  calls: Record<string, number>;
  dynamodb: number;
  s3: number;
  wallMs: number;
  cpuMs: number;
  /** Heap growth during the close (after a GC before it, when the process exposes one). */
  heapGrowthMiB: number;
}

export interface LateSealReport {
  items: number;
  seedMs: number;
  approval: CloseCost;
  inverse: CloseCost;
  undone: CloseCost;
  /** The forked emulators' CPU during the three closes (not the closes' cost; shown beside it). */
  emulatorCpuMsDuringCloses: number;
  batchPageBytes: number;
  sealBytes: number;
  /** `audit verify` of the whole batch after the closes: its wall time and findings (0: the seal verifies). */
  verifyMs: number;
  verifyFindings: number;
}

const billOf = (i: number) => `B-${String(i + 1).padStart(6, '0')}`;

async function writeAll(s: WiredServices, table: string, items: readonly Record<string, unknown>[]): Promise<void> {
  const batches: Array<Record<string, unknown>[]> = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  await mapBounded(batches, SEED_FAN_OUT, async (batch) => {
    let pending = batch.map((Item) => ({ PutRequest: { Item } }));
    while (pending.length > 0) {
      const answer = await s.clients.db.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (answer.UnprocessedItems?.[table] ?? []) as typeof pending;
    }
  });
}

function chainOf(key: string, inputs: Array<{ type: string; data?: Record<string, unknown> }>, at: string): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const input of inputs) {
    const last = events.at(-1);
    events.push(sealEvent(key, (last?.seq ?? 0) + 1, last?.hash ?? GENESIS_HASH, { actor: 'bench', data: {}, ...input }, at));
  }
  return events;
}

function claimOf(batch: BatchRef, key: string, billNo: string, action: string, status: ClaimStatus, at: string): Claim {
  return {
    key,
    taskId: batch.taskId,
    tenant: batch.tenant,
    billNo,
    action,
    identity: 'svc-recon-acme',
    owner: `arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:${key}`,
    status,
    version: 3,
    leaseUntil: at,
    attempts: 1,
    createdAt: at,
    updatedAt: at,
    ...(status === 'DONE' ? { outcome: 'done' } : {}),
  } as Claim;
}

function recordOf(batch: BatchRef, key: string, billNo: string, action: string, at: string) {
  return {
    outcome: 'done',
    key,
    identity: 'svc-recon-acme',
    tenant: batch.tenant,
    taskId: batch.taskId,
    billNo,
    action,
    tier: 'browser',
    verdict: 'confirmed',
    observedStatus: 'processed',
    evidence: [],
    recordedAt: at,
  };
}

/**
 * Seeds a batch of `items` as its end seals it (see above). `only`: store the claims, chains and records of just
 * the two items the closes involve, while seal.json and the batch page still hold every item (hashed as if
 * stored): what a close could read at full size, in a second instead of minutes, for a test that compares a
 * close's requests with the same close in a batch seeded whole.
 */
export async function seedSealedBatch(
  s: WiredServices,
  taskId: string,
  items: number,
  options: { only?: 'involved' } = {},
): Promise<SealedBatchFixture> {
  const batch = { tenant: TENANT, taskId };
  const at = new Date().toISOString();
  const keys = Array.from({ length: items }, (_, i) => idempotencyKey({ taskId, tenant: TENANT, billNo: billOf(i), action: ACTION }));
  const approvalKey = keys[0]!;
  const undoneKey = keys[1]!;
  const routed = (i: number) => ({ type: 'routed', data: { item: { taskId, tenant: TENANT, billNo: billOf(i), action: ACTION } } });
  const chains = keys.map((key, i) =>
    chainOf(
      key,
      i === 0 ? [routed(i), { type: 'claimed' }, { type: 'approval_requested' }] : [routed(i), { type: 'claimed' }, { type: 'completed' }],
      at,
    ),
  );
  const claims = keys.map((key, i) => claimOf(batch, key, billOf(i), ACTION, i === 0 ? 'CLAIMED' : 'DONE', at));
  const stored = (i: number) => options.only === undefined || i < 2;
  await writeAll(s, s.table('claims'), claims.filter((_, i) => stored(i)) as unknown as Record<string, unknown>[]);
  await writeAll(s, s.table('audit'), chains.filter((_, i) => stored(i)).flat() as unknown as Record<string, unknown>[]);

  // Every finished item's record.json (the batch page reads them); the waiting item has none yet.
  const records = new Map<string, ReturnType<typeof recordOf>>();
  const folders = new Map<string, Map<string, HashedObject>>();
  await mapBounded(keys.slice(1), SEED_FAN_OUT, async (key) => {
    const i = keys.indexOf(key);
    const record = recordOf(batch, key, billOf(i), ACTION, at);
    records.set(key, record);
    const body = JSON.stringify(record, null, 2);
    // The page the batch's end rendered for the item (a stand-in: a later close renders it again from the chain).
    const page = `<!doctype html><title>${key}</title><p>${billOf(i)} done</p>`;
    if (stored(i)) {
      await s.evidence.put(evidenceKey({ ...batch, key }, 'record.json'), body, 'application/json');
      await s.evidence.put(evidenceKey({ ...batch, key }, 'index.html'), page, 'text/html; charset=utf-8');
    }
    const hashed = (name: string, content: string): [string, HashedObject] => [
      name,
      { name, sha256: sha256Hex(content), bytes: Buffer.byteLength(content) },
    ];
    folders.set(key, new Map([hashed('index.html', page), hashed('record.json', body)]));
  });

  const top = new Map<string, HashedObject>();
  const putTop = async (name: string, body: string) => {
    const stored = await s.evidence.put(
      batchKey(batch, name),
      body,
      name.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/json',
    );
    top.set(name, { name, sha256: stored.sha256, bytes: stored.bytes });
  };
  await putTop('list.json', JSON.stringify(keys.map((_, i) => ({ billNo: billOf(i), status: 'PENDING' }))));
  const summary = {
    task: taskId,
    tenant: TENANT,
    read: items,
    items,
    counts: { done: items - 1, awaiting_approval: 1 },
    results: keys.map((key, i) => ({ outcome: i === 0 ? 'awaiting_approval' : 'done', key, billNo: billOf(i) })),
    finishedAt: at,
  };
  await putTop('batch.json', JSON.stringify(summary, null, 2));
  const page = renderBatchPage({
    batch,
    summary,
    items: keys.map((key, i) => ({ key, claim: claims[i]!, hasPage: i > 0, ...(records.get(key) ? { record: records.get(key)! } : {}) })),
    top,
    sealed: true,
  });
  await putTop('index.html', page);
  const seal = buildSeal(
    batch,
    { batch, top, items: folders, nested: [], unreadable: [] },
    keys.map((key, i) => ({ key, events: chains[i]!, status: claims[i]!.status, billNo: billOf(i), action: ACTION })),
    'schedule',
  );
  await writeSeal(s, seal);
  return {
    batch,
    approvalKey,
    undoneKey,
    inverseKey: idempotencyKey({ taskId, tenant: TENANT, billNo: billOf(1), action: INVERSE_ACTION }),
  };
}

/** Stores what a closing write stores before its close: pictures, record.json, the final events, the claim. */
async function finishWrite(
  s: WiredServices,
  batch: BatchRef,
  key: string,
  billNo: string,
  action: string,
  events: AuditEventType[],
): Promise<void> {
  const at = new Date().toISOString();
  const stored = await Promise.all(
    ['before.png', 'after.png'].map((name) => s.evidence.put(evidenceKey({ ...batch, key }, name), PICTURE, 'image/png')),
  );
  for (const type of events) {
    const evidence = stored.map((o) => ({ key: o.key, sha256: o.sha256 }));
    await s.audit.append(key, type === 'readback' ? sampleEvent('readback', { evidence }) : sampleEvent(type));
  }
  await s.evidence.put(
    evidenceKey({ ...batch, key }, 'record.json'),
    JSON.stringify(recordOf(batch, key, billNo, action, at)),
    'application/json',
  );
  await s.clients.db.send(
    new PutCommand({ TableName: s.table('claims'), Item: { ...claimOf(batch, key, billNo, action, 'DONE', at), version: 5 } }),
  );
}

/** Counts the requests of the services' DynamoDB and S3 clients while `run` runs, and measures it. */
export async function measured(s: WiredServices, run: () => Promise<unknown>): Promise<CloseCost> {
  const calls: Record<string, number> = {};
  const counts = { dynamodb: 0, s3: 0 };
  const name = `count-calls-${Date.now()}-${Math.random()}`;
  const counter =
    (service: 'dynamodb' | 's3') => (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => {
      const command = context.commandName ?? 'unknown';
      calls[command] = (calls[command] ?? 0) + 1;
      counts[service] += 1;
      return next(args);
    };
  s.clients.db.middlewareStack.add(counter('dynamodb') as never, { step: 'initialize', name });
  s.clients.s3.middlewareStack.add(counter('s3') as never, { step: 'initialize', name });
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 10);
  const cpu = process.cpuUsage();
  const wall = performance.now();
  try {
    await run();
  } finally {
    clearInterval(sampler);
    s.clients.db.middlewareStack.remove(name);
    s.clients.s3.middlewareStack.remove(name);
  }
  const used = process.cpuUsage(cpu);
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  return {
    calls,
    ...counts,
    wallMs: Math.round(performance.now() - wall),
    cpuMs: Math.round((used.user + used.system) / 1000),
    heapGrowthMiB: Math.round(((heapPeak - heapBefore) / 1024 / 1024) * 10) / 10,
  };
}

/** The three late closes of the fixture, each measured: the approved item, the inverse, the undone write. */
export async function closeLateItems(
  s: WiredServices,
  fixture: SealedBatchFixture,
): Promise<Pick<LateSealReport, 'approval' | 'inverse' | 'undone'>> {
  const { batch, approvalKey, undoneKey, inverseKey } = fixture;
  const ref = (key: string) => ({ key, ...batch });
  await finishWrite(s, batch, approvalKey, billOf(0), ACTION, ['approved', 'write_started', 'readback', 'completed']);
  const approval = await measured(s, () => refreshItemEvidence(s, ref(approvalKey)));

  // The undo: the write's chain names its inverse, which runs as its own write in the same batch folder.
  await s.audit.append(undoneKey, sampleEvent('compensation_started', { inverseKey }, 'ops@acme.example'));
  const item = { taskId: batch.taskId, tenant: batch.tenant, billNo: billOf(1), action: INVERSE_ACTION, compensates: undoneKey };
  await s.audit.append(inverseKey, sampleEvent('routed', { item }, 'ops@acme.example'));
  await s.audit.append(inverseKey, sampleEvent('claimed'));
  await finishWrite(s, batch, inverseKey, billOf(1), INVERSE_ACTION, ['write_started', 'readback', 'completed']);
  const inverse = await measured(s, () => refreshItemEvidence(s, ref(inverseKey)));
  await s.audit.append(undoneKey, sampleEvent('compensated', { inverseKey, outcome: 'done' }, 'ops@acme.example'));
  const undone = await measured(s, () => refreshItemEvidence(s, ref(undoneKey)));
  return { approval, inverse, undone };
}

/** Services on the local stack (local-services.ts), with the evidence store's checksum probe already made. */
export async function startServices(options: { forked?: boolean; configPath?: string } = {}): Promise<LocalServices> {
  const started = await startLocalServices({ ...options, dataDirPrefix: 'paperclip-late-seal-' });
  await probeChecksums(started.services);
  return started;
}

/**
 * The evidence store asks the endpoint once whether it keeps checksums (GetObjectAttributes; s3rver does not, and
 * from then on objects are read): asked here, so no measured close pays for it.
 */
async function probeChecksums(services: WiredServices): Promise<void> {
  await services.evidence.put('bench/probe.txt', 'probe', 'text/plain');
  await services.evidence.storedChecksum('bench/probe.txt');
}

/**
 * The whole measurement: a batch of `items` seeded whole, the three closes measured with the emulators in a
 * forked process (so the CPU and heap are the closes' own, as a Lambda function would spend them), then the
 * whole batch verified.
 */
export async function measureLateSeal(options: { items: number; log?: (line: string) => void }): Promise<LateSealReport> {
  const log = options.log ?? (() => undefined);
  const { services, stop, emulatorCpuMs } = await startServices({ forked: true });
  try {
    if (!process.env['POWERTOOLS_LOG_LEVEL']) logger.setLogLevel('WARN');
    log(`late seal at scale: seeding a sealed batch of ${options.items} items`);
    const seeded = performance.now();
    const fixture = await seedSealedBatch(services, `T-${TENANT}-late-seal-${options.items}`, options.items);
    const seedMs = Math.round(performance.now() - seeded);
    log('late seal at scale: closing three items after the seal');
    const emulatorBefore = await emulatorCpuMs();
    const closes = await closeLateItems(services, fixture);
    const emulatorMs = Math.round((await emulatorCpuMs()) - emulatorBefore);
    log('late seal at scale: verifying the whole batch');
    const verifyStarted = performance.now();
    const verified = await verifyBatch(services, fixture.batch);
    const size = async (name: string) => (await services.evidence.get(batchKey(fixture.batch, name)))?.length ?? 0;
    const report: LateSealReport = {
      items: options.items,
      seedMs,
      ...closes,
      emulatorCpuMsDuringCloses: emulatorMs,
      batchPageBytes: await size('index.html'),
      sealBytes: await size('seal.json'),
      verifyMs: Math.round(performance.now() - verifyStarted),
      verifyFindings: verified.findings.length,
    };
    log(`late seal at scale: ${JSON.stringify(report)}`);
    return report;
  } finally {
    await stop();
  }
}

/** `npx tsx --expose-gc bench/late-seal-scale.ts [N]`: the measurement alone, printed as JSON. */
runStandalone(import.meta.url, ([items]) =>
  measureLateSeal({ items: Number(items ?? 10_000), log: (line) => console.error(`[bench] ${line}`) }),
);
