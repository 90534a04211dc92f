import { summarizeBatch, type BatchItem } from '../src/app/batch.js';
import { sampleEvent } from '../test/support/audit-events.js';
import type { WiredServices } from '../src/composition/services.js';
import { batchKey } from '../src/app/ports/evidence.js';
import type { Claim } from '../src/domain/claim.js';
import { idempotencyKey } from '../src/domain/task.js';
import { mapBounded } from '../src/lib/map-bounded.js';
import { logger } from '../src/observability/telemetry.js';
import { runStandalone } from './standalone.js';
import { startLocalServices } from './local-services.js';

/**
 * Summarize's own cost at batch scale: the real summarizeBatch over N settled
 * items (each with a DONE claim, a four-event audit chain, before/after
 * screenshots and its outcome record (record.json) in its folder, and one line in the map
 * run's results), against dynalite and s3rver running in a forked process. This
 * process runs nothing but Summarize while it is measured, so its CPU and
 * memory are Summarize's (the handler, the SDK, hashing, rendering), which is
 * what a Lambda function would spend; the emulators' CPU is reported beside it.
 */

export interface SummarizeScaleReport {
  items: number;
  /** Per item, what each item's folder holds (the fixture). */
  objectsPerItem: number;
  auditEventsPerItem: number;
  wallMs: number;
  /** This process (Summarize alone) during the summary. */
  cpuMs: number;
  /** The forked emulators during the summary (not Summarize's cost; shown for comparison). */
  emulatorCpuMs: number;
  wallMsPerItem: number;
  cpuMsPerItem: number;
  /** Resident set of this process before the summary and its peak during it (sampled every 25 ms). */
  rssBeforeMiB: number;
  peakRssMiB: number;
  peakHeapUsedMiB: number;
  summaryItems: number;
  sealedItems: number;
}

const TENANT = 'acme';
/** A small stand-in screenshot: the seal hashes whatever bytes are there; the size only moves S3 time. */
const SCREENSHOT_BYTES = 24 * 1024;
const FIXTURE_FAN_OUT = 16;

const MiB = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function seedItems(s: WiredServices, taskId: string, count: number): Promise<{ manifestKey: string }> {
  const now = new Date().toISOString();
  const items: BatchItem[] = Array.from({ length: count }, (_, i) => {
    const task = {
      taskId,
      tenant: TENANT,
      billNo: `B-${String(i + 1).padStart(6, '0')}`,
      action: 'mark_processed',
      requestedBy: 'schedule',
      params: {},
    };
    return { key: idempotencyKey(task), needsApproval: false, task };
  });
  const screenshot = Buffer.alloc(SCREENSHOT_BYTES, 7);
  await mapBounded(items, FIXTURE_FAN_OUT, async ({ key, task }) => {
    const claim: Claim = {
      key,
      taskId,
      tenant: TENANT,
      billNo: task.billNo,
      action: task.action,
      identity: 'svc-recon-acme',
      owner: `arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:${key}`,
      status: 'DONE',
      version: 3,
      leaseUntil: now,
      attempts: 1,
      createdAt: now,
      updatedAt: now,
      outcome: 'done',
    } as Claim;
    await s.claims.tryCreate(claim);
    for (const type of ['claimed', 'pre_state_registered', 'write_started', 'readback'] as const)
      await s.audit.append(key, sampleEvent(type, {}, 'bench'));
    await s.evidence.put(batchKey({ tenant: TENANT, taskId }, `${key}/before.png`), screenshot, 'image/png');
    await s.evidence.put(batchKey({ tenant: TENANT, taskId }, `${key}/after.png`), screenshot, 'image/png');
    // The outcome record Complete writes; the item pages and the batch page read it.
    const record = {
      outcome: 'done',
      key,
      identity: 'svc-recon-acme',
      tenant: TENANT,
      taskId,
      billNo: task.billNo,
      action: task.action,
      tier: 'browser',
      verdict: 'confirmed',
      observedStatus: 'processed',
      evidence: [],
      recordedAt: now,
    };
    await s.evidence.put(batchKey({ tenant: TENANT, taskId }, `${key}/record.json`), JSON.stringify(record, null, 2), 'application/json');
  });
  // The map run's results as the ResultWriter exports them (JSON Lines, Transformation NONE), and its manifest.
  const folder = `runs/${TENANT}/${taskId}/bench/results`;
  const mapRunArn = `arn:aws:states:us-east-1:000000000000:mapRun:paperclip-local-batch/${taskId}:bench`;
  const lines = items.map((item) =>
    JSON.stringify({
      ExecutionArn: `${mapRunArn}:${item.key}`,
      Input: JSON.stringify(item),
      Output: JSON.stringify({ outcome: 'done', key: item.key, billNo: item.task.billNo, executionArn: item.task.billNo }),
      Status: 'SUCCEEDED',
    }),
  );
  const resultsKey = `${folder}/SUCCEEDED_0.json`;
  await s.evidence.put(resultsKey, `${lines.join('\n')}\n`, 'application/json');
  const manifestKey = `${folder}/manifest.json`;
  await s.evidence.put(
    manifestKey,
    JSON.stringify({
      DestinationBucket: s.evidence.bucket,
      MapRunArn: mapRunArn,
      ResultFiles: { SUCCEEDED: [{ Key: resultsKey }], FAILED: [], PENDING: [] },
    }),
    'application/json',
  );
  return { manifestKey };
}

/** Seeds N settled items on a fresh local stack, then runs and measures one summary of them. */
export async function measureSummarizeScale(options: {
  items: number;
  configPath?: string;
  log?: (line: string) => void;
}): Promise<SummarizeScaleReport> {
  const log = options.log ?? (() => undefined);
  const { services, emulatorCpuMs, stop } = await startLocalServices({
    forked: true,
    ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
    dataDirPrefix: 'paperclip-summarize-scale-',
  });
  try {
    if (!process.env['POWERTOOLS_LOG_LEVEL']) logger.setLogLevel('WARN');
    const taskId = `T-${TENANT}-summarize-scale-${options.items}`;
    log(`summarize at scale: seeding ${options.items} settled items`);
    const { manifestKey } = await seedItems(services, taskId, options.items);
    log('summarize at scale: summarising');

    const emulatorBefore = await emulatorCpuMs();
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    let peakHeap = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 25);
    const cpuBefore = cpuNow();
    const wallBefore = performance.now();
    const summary = await summarizeBatch(services, {
      batch: { taskId, tenant: TENANT, requestedBy: 'schedule' },
      read: options.items,
      results: { MapRunArn: 'bench', ResultWriterDetails: { Bucket: services.evidence.bucket, Key: manifestKey } },
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:paperclip-local-batch:${taskId}`,
    });
    const wallMs = performance.now() - wallBefore;
    const cpuMs = cpuNow() - cpuBefore;
    clearInterval(sampler);
    const emulatorMs = (await emulatorCpuMs()) - emulatorBefore;

    const sealBody = await services.evidence.get(batchKey({ tenant: TENANT, taskId }, 'seal.json'));
    const sealedItems = sealBody ? ((JSON.parse(sealBody.toString('utf8')) as { items?: unknown[] }).items?.length ?? 0) : 0;
    const report: SummarizeScaleReport = {
      items: options.items,
      objectsPerItem: 3,
      auditEventsPerItem: 4,
      wallMs: Math.round(wallMs),
      cpuMs: Math.round(cpuMs),
      emulatorCpuMs: Math.round(emulatorMs),
      wallMsPerItem: Math.round((wallMs / options.items) * 100) / 100,
      cpuMsPerItem: Math.round((cpuMs / options.items) * 100) / 100,
      rssBeforeMiB: MiB(rssBefore),
      peakRssMiB: MiB(peakRss),
      peakHeapUsedMiB: MiB(peakHeap),
      summaryItems: summary.items,
      sealedItems,
    };
    log(`summarize at scale: ${JSON.stringify(report)}`);
    return report;
  } finally {
    await stop();
  }
}

/** `npx tsx bench/summarize-scale.ts [N]`: the measurement alone, printed as JSON. */
runStandalone(import.meta.url, ([items]) =>
  measureSummarizeScale({ items: Number(items ?? 2000), log: (line) => console.error(`[bench] ${line}`) }),
);
