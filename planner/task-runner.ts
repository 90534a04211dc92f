import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { runStep, type StepContext, type StepResult } from '../src/browser/executor.js';
import { parseOrThrow } from '../src/config/errors.js';
import { SessionLostError } from '../src/domain/errors.js';
import type { Step } from '../src/sitepack/action-language.js';
import type { SitePack } from '../src/sitepack/schema.js';
import type { PlannerConfig } from './config.js';
import { contentTypeFor, sha256, type EvidenceSink } from './evidence.js';
import { appendHistory, EMPTY_HISTORY, renderHistory, type HistoryEntry } from './history.js';
import type { PlannerLogger } from './log.js';
import type { Notifier } from './notifier.js';
import { describePage } from './page-description.js';
import { draftPlan, PlanRejectedError } from './plan.js';
import { describeStep, fingerprint, validateAnswer } from './plan-validation.js';
import type { PlannerModel } from './providers/types.js';
import { TaskId, TaskRecord, type TaskOutput, type TaskResult, type TaskStore } from './task-state.js';

/**
 * The task loop (seed 003, 4.3): read the page, let the model decide the next
 * steps, run them one by one, persist after every step. A failed step makes the
 * planner read the page again and re-decide with the failure reason; a second
 * consecutive failure stops the task in waiting_confirm and tells a person.
 * The planner runs only read-only and page-state steps; a site-pack write is
 * recorded as a hand-off for the guarded write path and never clicked here.
 */

export const CreateTaskInput = z
  .object({
    instruction: z.string().min(1, 'give the instruction in plain words').max(2000),
    site: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'site ids are lower-kebab-case'),
    tenant: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,40}$/, 'tenant ids are lower-case letters, digits and -')
      .optional(),
    startUrl: z.string().startsWith('/', 'startUrl is a path on the site, e.g. /diff/list?tenant=acme').max(500).optional(),
    taskId: TaskId.optional(),
    /** A job's plan: run as given (validated like a model's), no model involved. */
    fixedPlan: z.array(z.unknown()).optional(),
  })
  .strict();
export type CreateTaskInput = z.input<typeof CreateTaskInput>;

export function newTaskId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `T-${stamp}-${randomBytes(3).toString('hex')}`;
}

export async function createTask(
  store: TaskStore,
  input: CreateTaskInput,
  rules: { pack: SitePack; writeWords: readonly string[] },
  now = new Date(),
): Promise<TaskRecord> {
  const parsed = parseOrThrow(CreateTaskInput, input, 'task');
  const at = now.toISOString();
  let plan: TaskRecord['plan'];
  if (parsed.fixedPlan) {
    const verdict = validateAnswer(parsed.fixedPlan, { pack: rules.pack, writeWords: rules.writeWords, policy: 'task', allowDone: false });
    if (!verdict.ok) throw new Error(`the job's plan is refused: ${verdict.reason}`);
    if (verdict.plan.kind !== 'read_only' && verdict.plan.kind !== 'reversible') {
      throw new Error(`a job's plan must be read-only or reversible, not ${verdict.plan.kind}`);
    }
    plan = { round: 1, kind: verdict.plan.kind, steps: verdict.plan.steps, draftedAt: at };
  }
  const record = parseOrThrow(
    TaskRecord,
    {
      taskId: parsed.taskId ?? newTaskId(now),
      version: 1,
      instruction: parsed.instruction,
      site: parsed.site,
      tenant: parsed.tenant,
      startUrl: parsed.startUrl,
      fixedPlan: plan !== undefined,
      status: 'pending',
      createdAt: at,
      updatedAt: at,
      plan,
      cursor: 0,
      rounds: plan ? 1 : 0,
      stepsExecuted: 0,
      retryCount: 0,
      consecutiveFailures: 0,
      history: EMPTY_HISTORY,
      executedPlans: [],
      outputs: [],
      draftAttempts: [],
    },
    'task',
  );
  await store.create(record);
  return record;
}

export interface RunnerDeps {
  store: TaskStore;
  pack: SitePack;
  config: PlannerConfig;
  /** The vendor's base URL; plans only ever name paths. */
  baseUrl: string;
  /** Needed unless the task has a fixed plan. */
  model?: PlannerModel;
  notifier: Notifier;
  evidence: EvidenceSink;
  logger: PlannerLogger;
  /** Checked between steps: when aborted the task stays `running` and resumes from its last completed step. */
  signal?: AbortSignal;
  now?: () => Date;
}

function shortError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Playwright appends a multi-line call log; the first lines say what went wrong.
  return message
    .split(/\n\s*Call log:/)[0]!
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}

function evidencePrefix(record: TaskRecord): string {
  return `planner/${record.tenant ?? 'no-tenant'}/${record.taskId}`;
}

function pathOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol.startsWith('http') ? `${parsed.pathname}${parsed.search}` : undefined;
  } catch {
    return undefined;
  }
}

export async function runTask(taskId: string, startPage: Page, deps: RunnerDeps): Promise<TaskRecord> {
  const { store, config, pack, logger } = deps;
  const now = () => (deps.now ?? (() => new Date()))().toISOString();
  let page = startPage;
  const loaded = await store.get(taskId);
  if (!loaded) throw new Error(`task ${taskId} does not exist`);
  let record: TaskRecord = loaded;
  if (!record.fixedPlan && !deps.model) throw new Error(`task ${taskId} needs a planner model (its plan is drafted, not fixed)`);

  const log = (event: string, fields: Record<string, unknown> = {}) => logger.log(event, { taskId, ...fields });
  const save = async (patch: Partial<TaskRecord>): Promise<TaskRecord> => {
    record = await store.update({ ...record, ...patch, updatedAt: now() }, record.version);
    return record;
  };
  const stepContext = (): StepContext => ({
    baseUrl: deps.baseUrl,
    params: record.tenant ? { tenant: record.tenant } : {},
    sessionLost: pack.sessionLost,
    traced: false,
    timeoutMs: config.step_timeout_ms,
  });

  const putEvidence = async (seq: number, as: string, kind: TaskOutput['kind'], fileName: string, body: Uint8Array | string) => {
    const key = `${evidencePrefix(record)}/${String(seq).padStart(4, '0')}-${fileName}`;
    const contentType = contentTypeFor(fileName);
    await deps.evidence.put(key, body, contentType);
    const output: TaskOutput = { seq, as, kind, key, contentType, bytes: Buffer.byteLength(body), sha256: sha256(body) };
    return output;
  };

  /** Terminal and waiting states leave a screenshot and the task record as evidence, and tell a person when needed. */
  const finish = async (status: TaskRecord['status'], result: TaskResult): Promise<TaskRecord> => {
    const outputs = [...record.outputs];
    if (status === 'waiting_confirm' || status === 'failed') {
      const shot = await page.screenshot({ fullPage: true }).catch(() => undefined);
      if (shot) outputs.push(await putEvidence(record.stepsExecuted, `${status}-page`, 'screenshot', `${status}-page.png`, shot));
    }
    await save({ status, result, outputs });
    const body = JSON.stringify({ ...record, evidenceWrittenAt: now() }, null, 2);
    await deps.evidence.put(`${evidencePrefix(record)}/record.json`, body, 'application/json');
    log('planner.task_finished', { status, outcome: result.outcome, reason: result.reason, steps: record.stepsExecuted });
    if (status === 'waiting_confirm' || status === 'failed') {
      await deps.notifier.notify({
        taskId,
        status,
        subject: `Paperclip task ${taskId} ${status === 'failed' ? 'failed' : 'needs a person'}`,
        message: result.reason ?? status,
        details: { instruction: record.instruction, tenant: record.tenant, lastUrl: record.lastUrl, stepsExecuted: record.stepsExecuted },
      });
    }
    return record;
  };

  const execute = async (step: Step): Promise<{ ok: true; result: StepResult } | { ok: false; reason: string; sessionLost: boolean }> => {
    try {
      return { ok: true, result: await runStep(page, step, stepContext()) };
    } catch (error) {
      return { ok: false, reason: shortError(error), sessionLost: error instanceof SessionLostError };
    }
  };

  /** Records a failed step; returns the finished record when the task must stop, undefined to re-decide / retry. */
  const recordFailure = async (step: Step, reason: string, sessionLost: boolean, seq: number): Promise<TaskRecord | undefined> => {
    const entry: HistoryEntry = {
      seq,
      round: record.plan?.round ?? Math.max(record.rounds, 1),
      step,
      ok: false,
      error: reason,
      url: pathOf(page.url()),
      at: now(),
    };
    const consecutive = record.consecutiveFailures + 1;
    log('planner.step', { seq, ok: false, step: describeStep(step), error: reason, consecutive });
    await save({
      retryCount: record.retryCount + 1,
      consecutiveFailures: consecutive,
      lastFailure: { seq, step, reason },
      history: appendHistory(record.history, entry, historySettings(config)),
      // A drafted plan is re-decided from the page as it is now; a job's fixed plan retries the (read-only) step.
      ...(record.fixedPlan ? {} : { plan: undefined, cursor: 0 }),
    });
    if (sessionLost) return finish('failed', { outcome: 'failed', reason: `the vendor session is gone: ${reason}` });
    if (consecutive >= config.max_consecutive_failures) {
      return finish('waiting_confirm', {
        outcome: 'waiting_confirm',
        reason: `${consecutive} consecutive steps failed; last: ${describeStep(step)} — ${reason}`,
      });
    }
    return undefined;
  };

  if (record.status === 'pending') {
    await save({ status: 'running' });
    log('planner.task_started', { instruction: record.instruction, fixedPlan: record.fixedPlan });
  } else if (record.status === 'running') {
    log('planner.task_resumed', { cursor: record.cursor, stepsExecuted: record.stepsExecuted, round: record.plan?.round });
  } else {
    return record;
  }

  // A fresh (or restarted) process starts on a blank page: go back to where the task was.
  const reopen = pathOf(page.url()) === undefined ? (record.lastUrl ?? record.startUrl) : undefined;
  if (reopen) {
    const step: Step = { action: 'open', url: reopen };
    const opened = await execute(step);
    if (!opened.ok) {
      // Counted like any failed step: a slow page re-plans or retries, a lost session stops the task.
      const stopped = await recordFailure(
        step,
        `could not open ${reopen}: ${opened.reason}`,
        opened.sessionLost,
        record.stepsExecuted + record.retryCount + 1,
      );
      if (stopped) return stopped;
    }
  }

  for (;;) {
    if (deps.signal?.aborted) {
      log('planner.task_interrupted', { cursor: record.cursor, stepsExecuted: record.stepsExecuted });
      return record;
    }
    if (record.stepsExecuted >= config.max_task_steps) {
      return finish('failed', {
        outcome: 'failed',
        reason: `the task used its budget of ${config.max_task_steps} steps without reaching the goal`,
      });
    }

    const planDone = record.plan !== undefined && record.cursor >= record.plan.steps.length;
    if (record.fixedPlan && planDone) return finish('succeeded', { outcome: 'completed' });
    if (!record.plan || planDone) {
      const description = await describePage(page, {
        budgetChars: config.page_budget_chars,
        tableRowsShown: config.table_rows_shown,
      });
      const round = record.rounds + 1;
      let outcome: Awaited<ReturnType<typeof draftPlan>>;
      try {
        outcome = await draftPlan(
          deps.model!,
          {
            instruction: record.instruction,
            tenant: record.tenant,
            page: description,
            pack,
            history: { text: renderHistory(record.history) },
            failure: record.lastFailure
              ? { step: record.lastFailure.step, reason: record.lastFailure.reason, consecutive: record.consecutiveFailures }
              : undefined,
            continuation: record.rounds > 0 && !record.lastFailure,
            executedPlans: record.executedPlans,
          },
          { maxAttempts: config.max_attempts, maxTokens: config.max_tokens, writeWords: config.write_words, logger },
        );
      } catch (error) {
        if (!(error instanceof PlanRejectedError)) throw error;
        await save({
          draftAttempts: error.attempts.map((a) => ({ round, attempt: a.attempt, ok: a.ok, reason: a.reason?.slice(0, 1000) })),
        });
        return finish('failed', { outcome: 'failed', reason: error.message.slice(0, 2000) });
      }
      const { plan } = outcome;
      const attempts = outcome.attempts.map((a) => ({ round, attempt: a.attempt, ok: a.ok, reason: a.reason?.slice(0, 1000) }));
      if (plan.kind === 'done') {
        // Keep the last executed plan on record; "done" is an answer, not a plan.
        await save({ rounds: round, draftAttempts: attempts });
        log('planner.plan_accepted', { round, kind: plan.kind, steps: 0, attempts: outcome.attempts.length });
        return finish('succeeded', { outcome: 'completed' });
      }
      await save({
        rounds: round,
        cursor: 0,
        draftAttempts: attempts,
        plan: {
          round,
          kind: plan.kind,
          steps: plan.steps,
          sitePackAction: plan.sitePackAction,
          params: plan.params,
          pageHash: description.hash,
          draftedAt: now(),
        },
      });
      log('planner.plan_accepted', { round, kind: plan.kind, steps: plan.steps.length, attempts: outcome.attempts.length });
      if (plan.kind === 'handoff') {
        const action = pack.actions[plan.sitePackAction!]!;
        return finish('succeeded', {
          outcome: 'handoff',
          reason: `the goal needs the site-pack action "${plan.sitePackAction}"; handed to the guarded write path`,
          handoff: { sitePackAction: plan.sitePackAction!, reversibility: action.reversibility, params: plan.params, steps: plan.steps },
        });
      }
      continue;
    }

    const step = record.plan.steps[record.cursor]!;
    const seq = record.stepsExecuted + record.retryCount + 1;
    const outcome = await execute(step);
    const at = now();
    if (outcome.ok) {
      page = outcome.result.page;
      const outputs = [...record.outputs];
      let summary: string | undefined;
      const { extracted, download, screenshot } = outcome.result;
      if (download) {
        const output = await putEvidence(seq, download.as, 'download', download.as, download.body);
        outputs.push(output);
        summary = `file ${download.as} (${output.bytes} bytes, sha256 ${output.sha256.slice(0, 12)})`;
      }
      if (screenshot) {
        outputs.push(await putEvidence(seq, screenshot.as, 'screenshot', `${screenshot.as}.png`, screenshot.body));
        summary = `screenshot ${screenshot.as}`;
      }
      if (extracted) {
        const body = JSON.stringify({ as: extracted.as, url: pathOf(page.url()), extractedAt: at, value: extracted.value }, null, 2);
        outputs.push(await putEvidence(seq, extracted.as, 'extract', `${extracted.as}.json`, body));
        summary = Array.isArray(extracted.value) ? `table of ${extracted.value.length} rows` : `text "${extracted.value.slice(0, 60)}"`;
      }
      const entry: HistoryEntry = { seq, round: record.plan.round, step, ok: true, output: summary, url: pathOf(page.url()), at };
      const cursor = record.cursor + 1;
      const finishedPlan = cursor >= record.plan.steps.length;
      await save({
        cursor,
        stepsExecuted: record.stepsExecuted + 1,
        consecutiveFailures: 0,
        lastFailure: undefined,
        lastUrl: pathOf(page.url()) ?? record.lastUrl,
        outputs,
        history: appendHistory(record.history, entry, historySettings(config)),
        executedPlans: finishedPlan ? [...record.executedPlans, fingerprint(record.plan.steps)].slice(-5) : record.executedPlans,
      });
      log('planner.step', { seq, ok: true, step: describeStep(step), output: summary });
      continue;
    }

    const stopped = await recordFailure(step, outcome.reason, outcome.sessionLost, seq);
    if (stopped) return stopped;
  }
}

function historySettings(config: PlannerConfig) {
  return {
    verbatim: config.history.verbatim,
    summariseEvery: config.history.summarise_every,
    maxSummaries: config.history.max_summaries,
  };
}

/**
 * A person has looked at a task in waiting_confirm and lets it continue; their
 * note goes to the model with the failure, so the next plan can use it.
 */
export async function confirmTask(store: TaskStore, taskId: string, note: string, now = new Date()): Promise<TaskRecord> {
  const record = await store.get(taskId);
  if (!record) throw new Error(`task ${taskId} does not exist`);
  if (record.status !== 'waiting_confirm') throw new Error(`task ${taskId} is ${record.status}, not waiting_confirm`);
  const lastFailure = record.lastFailure
    ? { ...record.lastFailure, reason: `${record.lastFailure.reason} | a person says: ${note}`.slice(0, 400) }
    : undefined;
  return store.update(
    { ...record, status: 'running', consecutiveFailures: 0, lastFailure, result: undefined, updatedAt: now.toISOString() },
    record.version,
  );
}
