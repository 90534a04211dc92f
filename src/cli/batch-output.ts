import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchSummary } from '../app/batch.js';
import type { EmbeddedPaperclip } from '../../twin/runtime/index.js';
import type { FailOnRules } from './args.js';
import { createProgressRenderer } from './progress.js';
import { deadline, pollUntil } from '../lib/deadline.js';
import { TERMINAL_STATUSES, type Claim } from '../domain/claim.js';
import { itemLine, itemOutcome } from './items.js';

/**
 * What `npm start` and `paperclip run` print around a batch: the stack's
 * addresses, progress on stderr, where the evidence is, the approval links of
 * items that wait for a person, and last the one JSON summary line on stdout.
 */

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The flat summary line: task, read, then one count per outcome. */
export function summaryLine(summary: BatchSummary): string {
  return JSON.stringify({
    task: summary.task,
    tenant: summary.tenant,
    read: summary.read,
    ...summary.counts,
    ...(summary.settledEarlier ? { settled_earlier: summary.settledEarlier } : {}),
    // Of the counts above, what an earlier run of the task settled: `already_done: 8` on a re-run that wrote nothing.
    ...Object.fromEntries(Object.entries(summary.already ?? {}).map(([outcome, n]) => [`already_${outcome}`, n])),
    // 429s the vendor answered the items' steps with (the pack's pace keeps them rare; each was waited out or named),
    // the time their Retry-After waits took, and the time the items' requests waited for the pace.
    ...(summary.rateLimited ? { rate_limited: summary.rateLimited } : {}),
    ...(summary.rateLimitWaitMs ? { rate_limit_wait_ms: summary.rateLimitWaitMs } : {}),
    ...(summary.paceWaitMs ? { pace_wait_ms: summary.paceWaitMs } : {}),
    ...(summary.error ? { error: summary.error } : {}),
  });
}

/** One line per address of a started stack. */
export function logStack(paperclip: EmbeddedPaperclip, dataDir?: string): void {
  const { endpoints } = paperclip.stack;
  log(`local stack        dynamodb ${endpoints.dynamodb}  s3 ${endpoints.s3}  stepfunctions ${endpoints.stepfunctions}`);
  // The inbox's token is printed here once; other messages point at the inbox without it.
  log(`approval emails    ${endpoints.sesInbox}`);
  log(`approval pages     ${paperclip.approvals.url}`);
  if (dataDir) log(`data folder        ${dataDir}`);
}

/** A task id for a run started now: T-<yyyymmddhhmmss>-<tenant>. */
export function newTaskId(tenant: string): string {
  return `T-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${tenant}`;
}

/** An approval request as far as its mail is concerned. */
interface MailedRequest {
  approvalId: string;
  billNo: string;
  allowedApprovers: readonly string[];
}

/** Who each request's mail went to, matched by the approval id in the mail's link. */
function mailedRecipients(
  requests: readonly MailedRequest[],
  emails: ReadonlyArray<{ destination: { to: string[] }; body: { text?: string | undefined } }>,
): Array<{ billNo: string; to: string }> {
  return requests.flatMap((r) =>
    emails.flatMap((mail) => {
      const link = mail.body.text?.match(/https?:\/\/\S+\/approvals\/\S+/)?.[0];
      return link?.includes(r.approvalId) ? mail.destination.to.map((to) => ({ billNo: r.billNo, to })) : [];
    }),
  );
}

/**
 * Who was mailed for each of a task's items that wait for a person, read from
 * the local SES inbox. Those items run on in the background, so this waits a
 * bounded time for their mail to be sent. A request is stored before its mails
 * go out, so it waits until every expected request is mailed to each of its
 * approvers, not only until the requests exist. The links themselves are never
 * returned: a link decides an approval, so it stays in the approver's mail.
 */
export async function approvalRecipients(
  paperclip: EmbeddedPaperclip,
  task: { taskId: string; tenant: string },
  expected: number,
  timeoutMs: number,
): Promise<Array<{ billNo: string; to: string }>> {
  const s = paperclip.services;
  let recipients: Array<{ billNo: string; to: string }> = [];
  await pollUntil(
    deadline(timeoutMs),
    async () => {
      const claims = (await s.claims.byTask(task.taskId, task.tenant)).filter((c) =>
        s.config.write_policy.approval_required.includes(c.action),
      );
      const requests = (await Promise.all(claims.map((c) => s.approvals.byKey(c.key)))).flat();
      recipients = requests.length > 0 ? mailedRecipients(requests, await paperclip.stack.fetchEmails()) : [];
      const mailed = recipients;
      const allMailed = requests.every((r) => r.allowedApprovers.every((to) => mailed.some((m) => m.billNo === r.billNo && m.to === to)));
      return requests.length >= expected && allMailed;
    },
    500,
  );
  return recipients;
}

/** With --keep: reports each waiting item once it is decided and finished, until the process stops. */
function reportDecidedItems(paperclip: EmbeddedPaperclip, task: { taskId: string; tenant: string }): () => void {
  const s = paperclip.services;
  const reported = new Set<string>();
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const claims = await s.claims.byTask(task.taskId, task.tenant).catch(() => []);
      for (const c of claims) {
        if (!s.config.write_policy.approval_required.includes(c.action) || reported.has(c.key)) continue;
        if (['DONE', 'REJECTED', 'EXPIRED', 'TAKEOVER', 'STALE', 'FAILED', 'BLOCKED'].includes(c.status)) {
          reported.add(c.key);
          log(`${c.billNo} ${c.action}: ${c.status.toLowerCase()}${c.reason ? ` (${c.reason})` : ''}`);
        }
      }
      await sleep(1000);
    }
  })();
  return () => {
    stopped = true;
  };
}

export interface BatchCommandOptions {
  tenant: string;
  taskId: string;
  requestedBy: string;
  keep: boolean;
  /** As the user wrote it, for the follow-up commands printed. */
  dataDirLabel: string;
  /** Item outcomes that turn a batch that ran into exit code 3 (`--fail-on`). */
  failOn?: FailOnRules;
  /** One JSON line per item on stdout as it finishes (`run --json-lines`), before the summary line. */
  jsonLines?: boolean;
}

/**
 * `run --json-lines`: one line per item of the task once it settles, from the claims each progress update
 * reads. Items an earlier run settled are printed as `already_<outcome>`; what has not settled when the batch
 * ends (an item waiting for its approver) is printed then, so every item of the summary has its line.
 */
function itemLinePrinter(paperclip: EmbeddedPaperclip, earlier: ReadonlySet<string>) {
  const s = paperclip.services;
  const printed = new Set<string>();
  let queue = Promise.resolve();
  const print = (claim: Claim, final: boolean) => {
    if (printed.has(claim.key) || (!final && !TERMINAL_STATUSES.includes(claim.status))) return;
    printed.add(claim.key);
    queue = queue.then(async () => {
      const outcome = await itemOutcome(s, claim);
      const line = await itemLine(s, claim, earlier.has(claim.key) ? `already_${outcome}` : outcome);
      process.stdout.write(`${JSON.stringify(line)}\n`);
    });
  };
  return {
    update(claims: readonly Claim[] | undefined) {
      for (const claim of claims ?? []) print(claim, false);
    },
    async finish(taskId: string, tenant: string) {
      for (const claim of await s.claims.byTask(taskId, tenant)) print(claim, true);
      await queue;
    },
  };
}

/** The outcome rules a finished batch's counts break, said as `takeover 2 ≥ 1`. */
export function brokenFailOnRules(summary: BatchSummary, rules: FailOnRules = []): string[] {
  return rules.filter((r) => summary.counts[r.outcome] >= r.atLeast).map((r) => `${r.outcome} ${summary.counts[r.outcome]} ≥ ${r.atLeast}`);
}

/** Runs one batch with progress, prints the summary line; exit code 0 when the batch succeeded and read its list. */
export async function runBatchCommand(paperclip: EmbeddedPaperclip, o: BatchCommandOptions): Promise<number> {
  const began = Date.now();
  const { endpoints } = paperclip.stack;
  log(`batch ${o.taskId}: reading the ${o.tenant} discrepancy list, then one guarded write per pending item`);
  const progress = createProgressRenderer();
  const settledBefore = o.jsonLines
    ? (await paperclip.services.claims.byTask(o.taskId, o.tenant)).filter((c) => TERMINAL_STATUSES.includes(c.status))
    : [];
  const lines = o.jsonLines ? itemLinePrinter(paperclip, new Set(settledBefore.map((c) => c.key))) : undefined;
  const run = await paperclip.runBatch({ taskId: o.taskId, tenant: o.tenant, requestedBy: o.requestedBy }, (p) => {
    progress.update(p);
    lines?.update(p.claims);
  });
  progress.finish();
  await lines?.finish(o.taskId, o.tenant);
  log(
    `batch ${run.status.toLowerCase()} in ${((Date.now() - began) / 1000).toFixed(1)} s; evidence ` +
      `under s3://${paperclip.services.config.evidence.bucket}/evidence/${o.tenant}/${o.taskId}/`,
  );
  log(`evidence pages     npx paperclip evidence --data-dir ${o.dataDirLabel}  then open /evidence/${o.tenant}/${o.taskId}/index.html`);
  const dataDirFlag = o.dataDirLabel === '.paperclip' ? '' : ` --data-dir ${o.dataDirLabel}`;
  log(
    `verify and report  npx paperclip audit verify --batch ${o.tenant}/${o.taskId}${dataDirFlag}  ·  npx paperclip report --since 24h${dataDirFlag}`,
  );
  const awaiting = run.summary?.counts.awaiting_approval ?? 0;
  if (awaiting > 0) {
    const { inboxAddress } = await import('../../twin/aws/index.js');
    log(
      `${awaiting} irreversible item(s) await approval: the emails are in ${inboxAddress(endpoints.sesInbox)} (the approval emails URL above)`,
    );
    for (const { billNo, to } of await approvalRecipients(paperclip, o, awaiting, 90_000)) {
      log(`  ${billNo} → ${to} (open the mail to ${to} in the inbox)`);
    }
    log(
      o.keep
        ? '  approve in a browser and the item runs here, in the background'
        : '  (they can be decided only while this process runs, and running the task again does not mail them again: ' +
            'run a batch with irreversible actions with --keep; until these expire, after write_policy.approval_timeout_seconds ' +
            `(${paperclip.services.config.write_policy.approval_timeout_seconds} s), their bills stay claimed and a new task ` +
            'for them ends blocked)',
    );
  }
  if (run.summary) process.stdout.write(`${summaryLine(run.summary)}\n`);
  else process.stdout.write(`${JSON.stringify({ task: o.taskId, tenant: o.tenant, error: run.error ?? run.status })}\n`);
  if (o.keep) {
    log(
      `operator commands work through this process: npx paperclip compensate <key> --reason ... --data-dir ${o.dataDirLabel}, ` +
        `npx paperclip takeover list --data-dir ${o.dataDirLabel}`,
    );
    log('everything stays up; press Ctrl-C to stop');
    const stopReporting = reportDecidedItems(paperclip, o);
    await new Promise<void>((r) => process.once('SIGINT', () => r()));
    stopReporting();
  }
  if (run.status !== 'SUCCEEDED' || !run.summary || run.summary.error) return 1;
  const broken = brokenFailOnRules(run.summary, o.failOn);
  if (broken.length === 0) return 0;
  log(`exit 3: --fail-on ${broken.join(', ')} (the batch itself succeeded)`);
  return 3;
}
