import type { Services } from './services.js';
import { BatchRequest, idempotencyKey } from '../domain/task.js';
import { assertBatchRequesterAttested, attestedTask } from './requester.js';
import { InputRejectedError, failureMessage, workflowError, NamedError } from '../domain/errors.js';
import { batchKey, type StoredObject } from './ports/evidence.js';
import { type MapRunItemResult, MapRunOutput } from './ports/map-runs.js';
import { readContextFor, readList, type ListedItem } from '../browser/vendor-reads.js';
import type { Tenant } from '../config/schema.js';
import type { SitePack } from '../sitepack/schema.js';
import { withSession } from './sessions.js';
import { withSessionSlot } from './session-slots.js';
import type { SessionPurpose } from '../browser/identity-sessions.js';
import { own } from '../lib/own.js';
import { TERMINAL_STATUSES, type Claim, type ClaimStatus } from '../domain/claim.js';
import { sealBatchEvidence } from '../evidence/batch-end.js';
import { escapeHtml } from '../http/html.js';
import { log } from '../observability/telemetry.js';
import { mapBounded } from '../lib/map-bounded.js';
import { parseAmount } from '../domain/amount.js';

/** The map run's output as SummarizeBatch receives it; the handler validates its event with this. */
export { MapRunOutput };

export interface BatchItem {
  key: string;
  needsApproval: boolean;
  task: {
    taskId: string;
    tenant: string;
    billNo: string;
    action: string;
    requestedBy: string;
    params: Record<string, string>;
    /** ReadList attests the batch's requester for each item's execution (named by its key). */
    attestation?: string;
  };
}

/**
 * What ReadList hands the workflow: where the items are, never the items, so
 * the state stays a few hundred bytes at any batch size (the Distributed Map
 * reads them from S3 and writes every result back there).
 */
export interface BatchList {
  /** The request as normalised (a scheduled task id without its colons). */
  batch: BatchRequest;
  read: number;
  count: number;
  maxConcurrency: number;
  toleratedFailurePercentage: number;
  items: { bucket: string; key: string };
  results: { bucket: string; prefix: string };
  /** The list's own evidence (screenshot, rows, plan). */
  evidence: StoredObject[];
}

/** Working files of one batch execution: the item list and the map run's results (not evidence, so not sealed). */
export function runFolder(batch: { tenant: string; taskId: string }, executionArn: string): string {
  const execution = executionArn.split(':').at(-1) ?? 'local';
  return `runs/${batch.tenant}/${batch.taskId}/${execution}`;
}

/**
 * Where one process runs every step (the embedded stack, \`paperclip run\`), the item steps' write and readback
 * sessions are opened while the list is read, so the first item does not pay for their contexts and logins. On AWS
 * each function runs in its own environment, where a session opened here would never be used. A failure here only
 * means the first item opens its own sessions.
 */
async function warmItemSessions(s: Services, tenant: string, identity: string): Promise<void> {
  if (s.config.environment === 'aws') return;
  const traced: SessionPurpose[] = s.config.evidence.write_trace ? ['write'] : [];
  const secret = await s.secret(identity).catch(() => undefined);
  if (!secret) return;
  // Logging in counts against the identity's vendor sessions like any task: each warm-up takes a slot, without
  // waiting (the list read holds one already); when none is free the first item opens its own session instead.
  for (const purpose of ['write', 'readback'] as const) {
    await withSessionSlot(s, { tenant, identity }, () => s.sessions.warm(identity, secret, [purpose], traced), { waitSeconds: 0 }).catch(
      () => undefined,
    );
  }
}

export function parseBatch(raw: unknown): BatchRequest {
  const parsed = BatchRequest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || '(batch)';
    throw new InputRejectedError(`batch.${field}: ${issue?.message ?? 'invalid'}`, field);
  }
  return parsed.data;
}

/** Read step of a batch: the tenant's list through a read-only session, mapped to write tasks. */
export async function readBatchList(unscoped: Services, input: { batch: unknown; executionArn: string }): Promise<BatchList> {
  const batch = parseBatch(input.batch);
  const tenant = unscoped.config.tenants.find((t) => t.id === batch.tenant);
  if (!tenant) throw new InputRejectedError(`tenant "${batch.tenant}" is not configured; add it under tenants`, 'tenant');
  // The batch's requester is its entry point's (or its schedule's); each item carries it, attested for the item's own execution.
  await assertBatchRequesterAttested(unscoped, batch, input.executionArn);
  // The list, its evidence, the claims looked up and the run files are all the tenant's: one tenant session for all of it.
  const s = unscoped.forTenant({ tenant: tenant.id, identity: tenant.identity });
  const evidence: StoredObject[] = [];
  // A re-run of a task an earlier run summarised keeps that run's list files: its own go beside them.
  const named = (await firstSummaryKept(s, { tenant: tenant.id, taskId: batch.taskId }))
    ? (name: string) => rerunName(name, input.executionArn)
    : (name: string) => name;
  const listed: ListedItem[] = await withSession(s, tenant.identity, 'read', { trace: false, tenant: tenant.id }, async (session) => {
    const warming = warmItemSessions(s, tenant.id, tenant.identity);
    const rows = await readList(session, readContextFor(s, tenant.id)).finally(() => warming);
    evidence.push(
      await s.evidence.put(
        batchKey({ tenant: tenant.id, taskId: batch.taskId }, named('list.png')),
        await session.page.screenshot({ fullPage: true }),
        'image/png',
      ),
    );
    return rows;
  });
  evidence.push(
    await s.evidence.put(
      batchKey({ tenant: tenant.id, taskId: batch.taskId }, named('list.json')),
      JSON.stringify(listed, null, 2),
      'application/json',
    ),
  );
  // Pending items are the work. Items this task already claimed are passed on too, so a
  // re-run reports them as skipped (decided by the claim, without a browser) instead of
  // silently dropping them; items someone else already handled are not this task's concern.
  const candidates: BatchItem[] = [];
  const alreadyMoved: BatchItem[] = [];
  const plans = planRows(tenant, s.pack, listed);
  for (const { row, action } of plans) {
    const siteAction = action ? own(s.pack.actions, action) : undefined;
    if (!action || !siteAction || !own(s.config.actions, action)) continue;
    // Amounts read from the list travel as data for actions that need them (a refund of exactly this amount),
    // as a plain decimal read with the pack's separator; text that is no amount goes as shown, for the
    // action's parameter check to refuse by name.
    const params: Record<string, string> = {};
    if (own(siteAction.params, 'amount') && row.amount)
      params['amount'] = parseAmount(row.amount, s.pack.list.decimal)?.plain ?? row.amount.trim();
    const plain = { taskId: batch.taskId, tenant: tenant.id, billNo: row.billNo, action, requestedBy: batch.requestedBy, params };
    const key = idempotencyKey(plain);
    const task = await attestedTask(unscoped, plain, key);
    const item = { key, needsApproval: s.config.write_policy.approval_required.includes(action), task };
    (siteAction.appliesTo.includes(row.status) ? candidates : alreadyMoved).push(item);
  }
  evidence.push(
    await s.evidence.put(
      batchKey({ tenant: tenant.id, taskId: batch.taskId }, named('plan.json')),
      JSON.stringify(
        plans.map((p) => ({ billNo: p.row.billNo, status: p.row.status, kind: p.row.kind ?? null, action: p.action ?? null, why: p.why })),
        null,
        2,
      ),
      'application/json',
    ),
  );
  const claimed = new Set((await s.claims.existing(alreadyMoved.map((i) => i.key))).map((c) => c.key));
  const items = [...candidates, ...alreadyMoved.filter((i) => claimed.has(i.key))].slice(0, s.config.limits.max_batch_items);
  return storeBatchItems(s, { batch, read: listed.length, items, executionArn: input.executionArn, evidence });
}

/** Writes the batch's items to S3 for the Distributed Map and returns where they are. */
export async function storeBatchItems(
  s: Services,
  input: { batch: BatchRequest; read: number; items: BatchItem[]; executionArn: string; evidence?: StoredObject[] },
): Promise<BatchList> {
  const folder = runFolder(input.batch, input.executionArn);
  const key = `${folder}/items.json`;
  await s.working.put(key, JSON.stringify(input.items), 'application/json');
  return {
    batch: input.batch,
    read: input.read,
    count: input.items.length,
    maxConcurrency: s.config.limits.max_concurrency,
    toleratedFailurePercentage: s.config.limits.tolerated_failure_percentage,
    items: { bucket: s.working.bucket, key },
    results: { bucket: s.working.bucket, prefix: `${folder}/results` },
    evidence: input.evidence ?? [],
  };
}

/** What a batch does with one listed row: the action it gets, or why it gets none. */
export interface RowPlan {
  row: ListedItem;
  action?: string;
  why: string;
}

/**
 * Which action each row gets: by its status (`actions_by_status`), else by its
 * kind (`actions_by_kind`), else the tenant's `default_action`; and only when
 * the action applies to the row's status. Every row without one says why.
 */
export function planRows(tenant: Tenant, pack: SitePack, rows: readonly ListedItem[]): RowPlan[] {
  return rows.map((row) => {
    const byStatus = own(tenant.actions_by_status, row.status);
    const byKind = row.kind === undefined ? undefined : own(tenant.actions_by_kind, row.kind);
    const action = byStatus ?? byKind ?? tenant.default_action;
    const how = byStatus ? `status ${row.status}` : byKind ? `kind ${row.kind}` : 'default_action';
    if (!action) {
      const kind = row.kind === undefined ? 'no kind' : `kind ${row.kind}`;
      return { row, why: `no action for status ${row.status} or ${kind} in actions_by_status / actions_by_kind, and no default_action` };
    }
    const siteAction = own(pack.actions, action);
    if (!siteAction) return { row, why: `${how} maps to "${action}", which the site pack does not define` };
    if (!siteAction.appliesTo.includes(row.status)) {
      return { row, action, why: `${how} -> ${action}, but ${action} applies to ${siteAction.appliesTo.join(', ')}, not ${row.status}` };
    }
    return { row, action, why: `${how} -> ${action}` };
  });
}

/** A batch whose list could not be read: summarised and sealed, then failed, so it never ends as a success. */
export class BatchReadFailedError extends NamedError {
  override name = 'BatchReadFailedError';
}

/** Every item ran, but the summary or the seal could not be made: recorded, operators told, and the execution fails. */
export class BatchSummaryFailedError extends workflowError('BatchSummaryFailedError') {}

export const OUTCOMES = [
  'done',
  'skipped',
  'stale',
  'awaiting_approval',
  'takeover',
  'rejected',
  'expired',
  'blocked',
  'compensated',
  'error',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface BatchSummary {
  task: string;
  tenant: string;
  read: number;
  items: number;
  /** Each item by its outcome: this run's, or, for an item an earlier run of the task settled, that run's. */
  counts: Record<Outcome, number>;
  /** Items this run found settled by an earlier (or a concurrent) run of the same task, counted by that outcome. */
  settledEarlier?: number;
  /** Of `counts`, the items an earlier run settled, by outcome (a re-run says `already_done` for these). */
  already?: Partial<Record<Outcome, number>>;
  /**
   * 429s (Too Many Requests) the vendor answered the items' steps with (routing included), waited out or named in
   * the item's error, as their claims tally them; absent when there were none. The list read's own 429s are waited
   * out and logged, not counted here.
   */
  rateLimited?: number;
  /** Time the items' steps sat out Retry-After waits (ms); absent when none. */
  rateLimitWaitMs?: number;
  /** Time the items' requests waited for the identity's request pace (the pack's `pace`, ms); absent when none. */
  paceWaitMs?: number;
  error?: string;
}

/**
 * Whether the task folder already holds the summary of an earlier complete run (a batch.json that records no
 * failure): then this run is a re-run, and its own summary and list files go beside that run's, never over them.
 * A first run whose list could not be read summarised nothing to keep.
 */
export async function firstSummaryKept(s: Pick<Services, 'evidence'>, batch: { tenant: string; taskId: string }): Promise<boolean> {
  const body = await s.evidence.get(batchKey(batch, 'batch.json'));
  if (!body) return false;
  try {
    return !(JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
  } catch {
    return true; // unreadable: keep it for verify to report, never replace it
  }
}

/** `batch.json` of a re-run: `batch.rerun-<execution name>.json`, one per run, beside the first run's. */
export function rerunName(name: string, executionArn: string | undefined): string {
  const run = executionArn?.split(':').at(-1) || new Date().toISOString().replace(/[-:.]/g, '');
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}.rerun-${run}${name.slice(dot)}`;
}

/** What a settled claim says the item's outcome was. */
export function claimOutcome(claim: Claim): Outcome | undefined {
  if (!TERMINAL_STATUSES.includes(claim.status)) return undefined;
  if (claim.outcome && (OUTCOMES as readonly string[]).includes(claim.outcome) && claim.outcome !== 'skipped')
    return claim.outcome as Outcome;
  const byStatus: Partial<Record<ClaimStatus, Outcome>> = {
    DONE: 'done',
    STALE: 'stale',
    TAKEOVER: 'takeover',
    REJECTED: 'rejected',
    EXPIRED: 'expired',
    BLOCKED: 'blocked',
    FAILED: 'error',
  };
  return byStatus[claim.status];
}

/**
 * A run of a task that already ran (a re-run after a failed map run or summary, or a second runner) finds
 * its items claimed and skips them: nothing is written twice. Its summary still says what happened to each:
 * an item whose claim an earlier run settled is reported with that outcome, marked `settledEarlier`; one still
 * in progress elsewhere stays skipped, and a done write undone since (`paperclip compensate`) is reported
 * `compensated`. The task's settled claims this run's list no longer showed (a back office whose list drops
 * handled rows) are added the same way, so a re-run counts every item of the task, not only those still listed
 * (`withUnlisted`; not after a failed map run, whose missing results may be items this run settled). Reads the
 * task's claims once (the tenant-keyed task index) and the audit chain of each done one.
 */
async function settleEarlier(
  claimsOfTask: () => Promise<Map<string, Claim>>,
  s: Services,
  results: ItemResult[],
  options: { withUnlisted: boolean },
): Promise<number> {
  if (!options.withUnlisted && !results.some((r) => r.outcome === 'skipped' && r.key)) return 0;
  const claims = await claimsOfTask();
  if (options.withUnlisted) {
    const inResults = new Set(results.map((r) => r.key));
    // An inverse write (paperclip compensate) shares its original's task id but is not an item of the batch.
    const inverseOf = (billNo: string, action: string) => `${billNo}\u0000${action}`;
    const inverses = new Set([...claims.values()].flatMap((c) => (c.inverse ? [inverseOf(c.billNo, c.inverse.action)] : [])));
    for (const claim of claims.values()) {
      if (inverses.has(inverseOf(claim.billNo, claim.action))) continue;
      if (!inResults.has(claim.key) && TERMINAL_STATUSES.includes(claim.status))
        results.push({ outcome: 'skipped', key: claim.key, billNo: claim.billNo });
    }
  }
  const settledResults = results.flatMap((result) => {
    if (result.outcome !== 'skipped' || !result.key) return [];
    const claim = claims.get(result.key);
    const outcome = claim && claimOutcome(claim);
    return claim && outcome ? [{ result, claim, outcome }] : [];
  });
  // A write undone since (paperclip compensate) keeps its DONE claim; only its audit trail says it was rolled back.
  const undone = await mapBounded(
    settledResults.filter((r) => r.outcome === 'done'),
    AUDIT_READ_FAN_OUT,
    async ({ result }) => ((await rolledBack(s, result.key!)) ? result.key : undefined),
  );
  const compensated = new Set(undone.filter((key): key is string => key !== undefined));
  for (const { result, claim, outcome } of settledResults) {
    result.outcome = compensated.has(result.key!) ? 'compensated' : outcome;
    result.settledEarlier = true;
    result.reason = claim.reason ?? result.reason;
  }
  return settledResults.length;
}

/**
 * The rate-limit counts of the batch's items, from their claims (the task's claims, read once for the summary): each
 * item's result line gets its own, and the batch the sums. Only when some claim has any (nothing to read otherwise).
 */
function rateLimitsOf(
  claims: ReadonlyMap<string, Claim>,
  results: ItemResult[],
): Pick<BatchSummary, 'rateLimited' | 'rateLimitWaitMs' | 'paceWaitMs'> {
  const sums = { rateLimited: 0, rateLimitWaitMs: 0, paceWaitMs: 0 };
  for (const result of results) {
    const claim = result.key ? claims.get(result.key) : undefined;
    // An item an earlier run settled was counted in that run's summary.
    if (!claim || result.settledEarlier) continue;
    for (const field of ['rateLimited', 'rateLimitWaitMs', 'paceWaitMs'] as const) {
      const n = claim[field] ?? 0;
      if (n > 0) {
        result[field] = n;
        sums[field] += n;
      }
    }
  }
  return Object.fromEntries(Object.entries(sums).filter(([, n]) => n > 0));
}

/** Chains read at once when a re-run looks for writes undone since: each is one query. */
const AUDIT_READ_FAN_OUT = 8;

/** Whether the write's last compensation event says it was rolled back. */
export async function rolledBack(s: Services, key: string): Promise<boolean> {
  const events = await s.audit.events(key);
  const last = [...events].reverse().find((e) => COMPENSATION_CLOSED.includes(e.type));
  return last?.type === 'compensated';
}

const COMPENSATION_CLOSED = ['compensated', 'compensation_failed'];

/** One item's line in the summary: small and the same shape whatever happened to the item. */
export type ItemResult = MapRunItemResult;

/**
 * Counts the items' outcomes and stores the batch summary beside the evidence.
 * Results are read from the map run's files in S3 one line at a time; what is
 * kept per item is its small result line (about 200 bytes), so 10,000 items
 * fit comfortably in the function's memory.
 */
export async function summarizeBatch(
  s: Services,
  input: {
    batch: unknown;
    read?: number;
    results?: MapRunOutput | { Error: string; Cause?: string };
    /** Where the ResultWriter writes (ReadList's `results`): a failed map run's results are found there. */
    resultsAt?: { bucket: string; prefix: string };
    readError?: { Error: string; Cause?: string };
    /** Set by the workflow's SummarizeFailed state: the summary itself failed (its Catch). */
    summarizeError?: { Error: string; Cause?: string };
    executionArn?: string;
  },
): Promise<BatchSummary> {
  // The same normalisation ReadList applies: a scheduled id's colons are dropped, so the seal lands in the batch's own folder.
  const batch = parseBatch(pickRequest(input.batch));
  if (input.summarizeError) return recordSummaryFailure(s, batch, input.summarizeError, input.executionArn);
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const results: ItemResult[] = [];
  let mapError: string | undefined;
  let written = input.results && 'ResultWriterDetails' in input.results ? input.results : undefined;
  if (input.results && 'Error' in input.results) {
    mapError = failureMessage(input.results);
    // The map run failed, but its ResultWriter wrote every result it had: count them, do not drop them.
    if (input.resultsAt) written = await s.mapRuns.find(input.resultsAt);
  }
  if (written) for await (const result of s.mapRuns.read(written)) results.push(result);
  // The task's claims, read once (one query on the tenant-keyed task index) for what an earlier run settled and the
  // items' rate-limit counts.
  let claimsRead: Promise<Map<string, Claim>> | undefined;
  const claimsOfTask = () => (claimsRead ??= s.claims.byTask(batch.taskId, batch.tenant).then((cs) => new Map(cs.map((c) => [c.key, c]))));
  // Not after a failed read (no item ran) or map run (a missing result may be an item this run settled).
  const settledEarlier = await settleEarlier(claimsOfTask, s, results, { withUnlisted: !input.readError && !mapError });
  const already: Partial<Record<Outcome, number>> = {};
  for (const result of results) {
    const outcome = (OUTCOMES as readonly string[]).includes(result.outcome) ? (result.outcome as Outcome) : 'error';
    counts[outcome] += 1;
    if (result.settledEarlier) already[outcome] = (already[outcome] ?? 0) + 1;
  }
  const error = input.readError ? failureMessage(input.readError) : mapError;
  const rateLimits = results.some((r) => r.key && !r.settledEarlier) ? rateLimitsOf(await claimsOfTask(), results) : {};
  const summary: BatchSummary = {
    task: batch.taskId,
    tenant: batch.tenant,
    read: input.read ?? 0,
    items: results.length,
    counts,
    ...(settledEarlier > 0 ? { settledEarlier, already } : {}),
    ...rateLimits,
    ...(error ? { error } : {}),
  };
  // The first run's summary stays: a re-run's goes beside it (batch.rerun-<execution>.json), and the pages it keeps.
  const rerun = await firstSummaryKept(s, batch);
  await s.evidence.put(
    batchKey(batch, rerun ? rerunName('batch.json', input.executionArn) : 'batch.json'),
    JSON.stringify({ ...summary, results, finishedAt: new Date().toISOString() }, null, 2),
    'application/json',
  );
  // Item pages, the batch page and the seal over the whole folder; see docs/evidence.md.
  await sealBatchEvidence(s, batch, { sealedBy: input.executionArn ?? 'summarize-batch' });
  // Reading the list failed: the summary and seal are stored, and the execution fails with the reason.
  if (input.readError) throw new BatchReadFailedError(`the list could not be read, no item was processed: ${summary.error}`);
  return summary;
}

/**
 * The summary failed after every item ran (a timeout, S3 refusing a read, a
 * bug): without this the execution would end with a raw Lambda error and no
 * trace in the batch folder. Writes batch-failed.json beside the evidence, mails
 * operators.notify (a mail failure is logged, never fatal), then fails the
 * execution so the workflow-failure alarm fires too. Cheap on purpose: it reads
 * no results, so it does not fail the way the summary did.
 */
async function recordSummaryFailure(
  s: Services,
  batch: BatchRequest,
  failure: { Error: string; Cause?: string },
  executionArn: string | undefined,
): Promise<never> {
  const error = failureMessage(failure);
  const record = {
    task: batch.taskId,
    tenant: batch.tenant,
    error,
    executionArn: executionArn ?? null,
    failedAt: new Date().toISOString(),
  };
  const key = batchKey(batch, 'batch-failed.json');
  await s.evidence.put(key, JSON.stringify(record, null, 2), 'application/json');
  log().error(`batch summary failed: ${error}`, { tenant: batch.tenant, taskId: batch.taskId, record: key });
  const recipients = s.config.operators.notify;
  if (recipients.length > 0) {
    const lines = [
      `租户 Tenant: ${batch.tenant}`,
      `任务 Task: ${batch.taskId}`,
      `错误 Error: ${error}`,
      `执行 Execution: ${executionArn ?? '—'}`,
      `记录 Record: ${key}`,
      'Every item ran; their results and claims are kept. Re-run the summary by starting the batch again with the same task id:',
      'nothing is written twice, and each settled item is reported with its outcome.',
    ];
    await s.mail
      .send({
        to: recipients,
        subject: `[Paperclip] 批次汇总失败 Batch summary failed: ${batch.tenant} ${batch.taskId}`,
        text: `${lines.join('\n')}\n`,
        html: `<p>${lines.map(escapeHtml).join('<br>')}</p>`,
      })
      .catch((mailError: unknown) =>
        log().warn(`batch summary failure: could not mail ${recipients.join(', ')}: ${(mailError as Error).message}`, {
          taskId: batch.taskId,
        }),
      );
  }
  throw new BatchSummaryFailedError(`the summary of ${batch.tenant}/${batch.taskId} failed after every item ran: ${error}`);
}

/** The request fields of a batch input that may carry more (ReadFailed passes the whole state). */
function pickRequest(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object') return raw;
  const { taskId, tenant, requestedBy } = raw as Record<string, unknown>;
  return { taskId, tenant, ...(requestedBy !== undefined ? { requestedBy } : {}) };
}
