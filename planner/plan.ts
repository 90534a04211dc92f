import type { SitePack } from '../src/sitepack/schema.js';
import type { PlannerLogger } from './log.js';
import type { PageDescription } from './page-description.js';
import { judgeAnswer, type AcceptedPlan, type PlanPolicy } from './plan-validation.js';
import { reaskPrompt, systemPrompt, userPrompt, type UserPromptInput } from './prompt.js';
import { ModelCallError, type ModelMessage, type PlannerModel } from './providers/types.js';
import { NamedError } from '../src/domain/errors.js';

export { judgeAnswer, extractJson, validateAnswer, fingerprint, findLoop, isReadOnlyStep, writeTriggers } from './plan-validation.js';
export type { AcceptedPlan, PlanKind, PlanPolicy, Verdict } from './plan-validation.js';
export { systemPrompt, userPrompt } from './prompt.js';

/**
 * Drafting: ask the model, judge the answer, and re-ask with the reason when
 * it is rejected, a bounded number of times. Every attempt is recorded so a
 * person can see why a plan took three calls, or why there is none.
 */

export interface AttemptRecord {
  attempt: number;
  ok: boolean;
  /** Why the answer (or the call) was rejected. */
  reason?: string;
  /** The start of the rejected answer, for the person reviewing. */
  answerPreview?: string;
  inputTokens?: number;
  outputTokens?: number;
  latencyMs?: number;
}

export interface DraftRequest extends Omit<UserPromptInput, 'page'> {
  page: PageDescription;
  pack: SitePack;
  policy?: PlanPolicy;
  /** Fingerprints of the plans already executed in this task (loop detection). */
  executedPlans?: readonly string[];
}

export interface DraftSettings {
  maxAttempts: number;
  maxTokens: number;
  writeWords: readonly string[];
  logger: PlannerLogger;
}

export interface DraftOutcome {
  plan: AcceptedPlan;
  attempts: AttemptRecord[];
}

export class PlanRejectedError extends NamedError {
  override name = 'PlanRejectedError';
  constructor(readonly attempts: AttemptRecord[]) {
    super(
      `no acceptable plan after ${attempts.length} attempt(s):\n${attempts.map((a) => `  ${a.attempt}. ${a.reason ?? 'accepted'}`).join('\n')}`,
    );
  }
}

/** Rejected answers are echoed back shortened, so a rambling answer cannot blow up the re-ask. */
const ECHO_LIMIT = 1500;

export async function draftPlan(model: PlannerModel, request: DraftRequest, settings: DraftSettings): Promise<DraftOutcome> {
  const policy = request.policy ?? 'task';
  const system = systemPrompt(request.pack, policy);
  const messages: ModelMessage[] = [{ role: 'user', content: userPrompt(request) }];
  const attempts: AttemptRecord[] = [];
  for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
    let text: string;
    try {
      const reply = await model.complete({ system, messages, maxTokens: settings.maxTokens });
      text = reply.text;
      attempts.push({ attempt, ok: false, inputTokens: reply.inputTokens, outputTokens: reply.outputTokens, latencyMs: reply.latencyMs });
    } catch (error) {
      const reason =
        error instanceof ModelCallError
          ? `model call failed (${error.kind}): ${error.message}`
          : `model call failed: ${(error as Error).message}`;
      attempts.push({ attempt, ok: false, reason });
      settings.logger.log('planner.plan_attempt', { attempt, ok: false, reason });
      continue;
    }
    const record = attempts[attempts.length - 1]!;
    const verdict = judgeAnswer(text, {
      pack: request.pack,
      writeWords: settings.writeWords,
      policy,
      allowDone: request.continuation === true || request.failure !== undefined,
      executedPlans: request.executedPlans,
    });
    if (verdict.ok) {
      record.ok = true;
      settings.logger.log('planner.plan_attempt', { attempt, ok: true, kind: verdict.plan.kind, steps: verdict.plan.steps.length });
      return { plan: verdict.plan, attempts };
    }
    record.reason = verdict.reason;
    record.answerPreview = text.slice(0, 200);
    settings.logger.log('planner.plan_attempt', { attempt, ok: false, reason: verdict.reason });
    messages.push({ role: 'assistant', content: text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text });
    messages.push({ role: 'user', content: reaskPrompt(verdict.reason) });
  }
  throw new PlanRejectedError(attempts);
}
