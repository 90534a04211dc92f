import { paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { sharedBrowser } from '../src/browser/chromium.js';
import type { BatchSummary } from '../src/app/batch.js';
import type { EmbeddedPaperclip } from '../twin/runtime/embedded-paperclip.js';
import type { AwsUsage, AwsUsageSnapshot } from './aws-usage.js';
import { executionsBetween, readMapIterations, readExecution, type ParsedHistory } from './execution-history.js';

/**
 * One guarded batch through the local Step Functions endpoint (`runBatch`),
 * read back afterwards: the batch execution and every child guarded-write
 * execution with its history, the AWS requests the services made, and the
 * evidence the run left in the bucket.
 */

export interface EvidenceSizes {
  /** Every object under the task's folder. */
  totalBytes: number;
  objects: number;
  /** Objects inside item folders, by file name (before.png, trace.zip, ...). */
  perItemByName: Record<string, { count: number; bytes: number }>;
  /** Batch-level objects (list, batch summary, pages, seal). */
  batchBytes: number;
  batchObjects: number;
  /** Names of the batch-level objects (batch.json, index.html, seal.json, ...). */
  batchNames: string[];
}

export interface GuardedRun {
  taskId: string;
  status: string;
  error?: string;
  summary?: BatchSummary;
  startedAt: number;
  stoppedAt: number;
  wallMs: number;
  batch: ParsedHistory;
  /** The Distributed Map's iterations, each a child execution with its own history (billed transitions too). */
  iterations: ParsedHistory[];
  items: ParsedHistory[];
  usage: AwsUsageSnapshot;
  evidence: EvidenceSizes;
  /** Sessions taken through IdentitySessions.open during the run, by purpose (read, write, readback). */
  sessionsOpened: Record<string, number>;
  /** Browser contexts actually created for them (a kept context serves several sessions). */
  contextsCreated: number;
  /** Logins through the vendor's login form during the run. */
  logins: number;
  /** Every session taken, when, for what, and whether it needed a new context or a login: attributed to steps by time. */
  sessionOpens: SessionOpen[];
}

export interface SessionOpen {
  purpose: string;
  at: number;
  newContext: boolean;
  login: boolean;
}

async function evidenceSizes(paperclip: EmbeddedPaperclip, tenant: string, taskId: string): Promise<EvidenceSizes> {
  const prefix = `evidence/${tenant}/${taskId}/`;
  const sizes: EvidenceSizes = { totalBytes: 0, objects: 0, perItemByName: {}, batchBytes: 0, batchObjects: 0, batchNames: [] };
  const pages = paginateListObjectsV2(
    { client: paperclip.services.clients.s3 },
    { Bucket: paperclip.services.evidence.bucket, Prefix: prefix },
  );
  for await (const page of pages) {
    for (const object of page.Contents ?? []) {
      const rest = (object.Key ?? '').slice(prefix.length).split('/');
      const bytes = object.Size ?? 0;
      sizes.totalBytes += bytes;
      sizes.objects += 1;
      if (rest.length === 2 && rest[0]!.startsWith('k-')) {
        const entry = sizes.perItemByName[rest[1]!] ?? { count: 0, bytes: 0 };
        sizes.perItemByName[rest[1]!] = entry;
        entry.count += 1;
        entry.bytes += bytes;
      } else {
        sizes.batchBytes += bytes;
        sizes.batchObjects += 1;
        sizes.batchNames.push(rest.join('/'));
      }
    }
  }
  return sizes;
}

export async function runGuardedBatch(
  paperclip: EmbeddedPaperclip,
  usage: AwsUsage,
  request: { taskId: string; tenant: string; prefix: string },
): Promise<GuardedRun> {
  await sharedBrowser(); // warm, as for the raw script: launching is measured on its own
  usage.reset();
  const sessions = paperclip.services.sessions;
  const realOpen = sessions.open.bind(sessions);
  const sessionsOpened: Record<string, number> = {};
  const sessionOpens: SessionOpen[] = [];
  // Counting only: every call goes on to the real IdentitySessions. At concurrency 1 one open runs at a time,
  // so the counters' change across a call is that call's.
  sessions.open = async (...args: Parameters<typeof realOpen>) => {
    sessionsOpened[args[2]] = (sessionsOpened[args[2]] ?? 0) + 1;
    const at = Date.now();
    const before = sessions.stats;
    const opened = await realOpen(...args);
    const after = sessions.stats;
    sessionOpens.push({
      purpose: args[2],
      at,
      newContext: after.contextsCreated > before.contextsCreated,
      login: after.logins > before.logins,
    });
    return opened;
  };
  const contextsBefore = sessions.stats.contextsCreated;
  const loginsBefore = sessions.stats.logins;
  const before = Date.now();
  let run: Awaited<ReturnType<EmbeddedPaperclip['runBatch']>>;
  try {
    run = await paperclip.runBatch({ taskId: request.taskId, tenant: request.tenant });
  } finally {
    sessions.open = realOpen;
  }
  const used = usage.snapshot();
  const after = Date.now();
  const sfn = paperclip.services.clients.sfn;
  const batch = await readExecution(sfn, run.executionArn, request.prefix);
  const iterations = await readMapIterations(sfn, run.executionArn, request.prefix);
  const childArns = await executionsBetween(sfn, paperclip.arns.guardedWrite, before - 1000, after + 1000);
  const items: ParsedHistory[] = [];
  for (const arn of childArns) items.push(await readExecution(sfn, arn, request.prefix));
  items.sort((a, b) => a.startedAt - b.startedAt);
  return {
    taskId: request.taskId,
    status: run.status,
    ...(run.error ? { error: run.error } : {}),
    ...(run.summary ? { summary: run.summary } : {}),
    startedAt: batch.startedAt,
    stoppedAt: batch.stoppedAt,
    wallMs: batch.durationMs,
    batch,
    iterations,
    items,
    usage: used,
    evidence: await evidenceSizes(paperclip, request.tenant, request.taskId),
    sessionsOpened,
    contextsCreated: sessions.stats.contextsCreated - contextsBefore,
    logins: sessions.stats.logins - loginsBefore,
    sessionOpens,
  };
}
