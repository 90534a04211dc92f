import type { Claim } from '../domain/claim.js';
import { batchKey } from '../app/ports/evidence.js';
import type { EvidenceContext } from '../evidence/folder.js';
import { parseBatchFile } from '../evidence/batch-page.js';
import { listBatches } from '../evidence/verify.js';
import { classifyItem, type ItemFacts } from './classify.js';
import { computeReport, type BatchRow, type ReportData } from './metrics.js';

/**
 * Reads what the report counts: claims touched in the window (claims table,
 * by updatedAt), each one's audit chain, and the batch summaries (batch.json)
 * finished in the window.
 */

export interface ReportQuery {
  since?: Date;
  tenant?: string;
}

export async function claimsInWindow(ctx: EvidenceContext, query: ReportQuery): Promise<Claim[]> {
  return ctx.claims.updatedSince({ ...(query.since ? { since: query.since } : {}), ...(query.tenant ? { tenant: query.tenant } : {}) });
}

export async function classifyClaims(ctx: EvidenceContext, claims: readonly Claim[]): Promise<ItemFacts[]> {
  const facts: ItemFacts[] = [];
  for (const claim of claims) facts.push(classifyItem(claim, await ctx.audit.events(claim.key)));
  return facts;
}

export async function batchesInWindow(ctx: EvidenceContext, query: ReportQuery): Promise<BatchRow[]> {
  const rows: BatchRow[] = [];
  for (const batch of await listBatches(ctx, query.tenant)) {
    const file = parseBatchFile(await ctx.evidence.get(batchKey(batch, 'batch.json')));
    if (!file) continue;
    if (query.since && (!file.finishedAt || file.finishedAt < query.since.toISOString())) continue;
    rows.push({
      tenant: file.tenant,
      task: file.task,
      read: file.read,
      items: file.items,
      counts: file.counts,
      ...(file.rateLimited ? { rateLimited: file.rateLimited } : {}),
      ...(file.rateLimitWaitMs ? { rateLimitWaitMs: file.rateLimitWaitMs } : {}),
      ...(file.paceWaitMs ? { paceWaitMs: file.paceWaitMs } : {}),
      ...(file.finishedAt ? { finishedAt: file.finishedAt } : {}),
      ...(file.error ? { error: file.error } : {}),
    });
  }
  return rows;
}

export async function buildReport(ctx: EvidenceContext, query: ReportQuery): Promise<ReportData> {
  const facts = await classifyClaims(ctx, await claimsInWindow(ctx, query));
  const batches = await batchesInWindow(ctx, query);
  return computeReport(facts, batches, query);
}
