import type { Page } from 'playwright-core';
import { runStep, type StepContext } from '../src/browser/executor.js';
import { resolveLocator, scopeRoot } from '../src/browser/locate.js';
import type { Step } from '../src/sitepack/action-language.js';
import type { SitePack } from '../src/sitepack/schema.js';
import type { PlannerConfig } from './config.js';
import type { PlannerLogger } from './log.js';
import { describePage } from './page-description.js';
import { draftPlan, type AttemptRecord } from './plan.js';
import { describeStep, isReadOnlyStep } from './plan-validation.js';
import type { PlannerModel } from './providers/types.js';
import { NamedError } from '../src/domain/errors.js';

/**
 * The `visual` rung of the tool ladder (BRIEF 5, guarantee 8): when a page's
 * structured contract is gone (a redesign), a read-only extraction planned by
 * the model may still read it. What it returns is marked as visual-tier data
 * that can never be a verdict: callers may show it, queue it, compare it, but
 * readback decisions need the structured tiers.
 */

export interface VisualReadRequest {
  page: Page;
  /** What to read, in plain words. */
  instruction: string;
  pack: SitePack;
  model: PlannerModel;
  config: PlannerConfig;
  baseUrl: string;
  logger: PlannerLogger;
  tenant?: string;
}

export interface VisualReadResult {
  readonly tier: 'visual';
  /** Always false: visual reads never decide whether a write landed. */
  readonly verdictEligible: false;
  readonly data: Readonly<Record<string, string | string[][]>>;
  readonly screenshots: ReadonlyArray<{ as: string; body: Buffer }>;
  readonly steps: readonly Step[];
  readonly attempts: readonly AttemptRecord[];
  /** What the page offered when the read was planned. */
  readonly source: { url: string; pageHash: string; contract: { fields: string[]; testIds: string[] } };
}

export class VisualReadRefusedError extends NamedError {
  override name = 'VisualReadRefusedError';
}

export async function visualReadFallback(request: VisualReadRequest): Promise<VisualReadResult> {
  const { config, logger } = request;
  const description = await describePage(request.page, {
    budgetChars: config.page_budget_chars,
    tableRowsShown: config.table_rows_shown,
  });
  const { plan, attempts } = await draftPlan(
    request.model,
    { instruction: request.instruction, tenant: request.tenant, page: description, pack: request.pack, policy: 'visual_read_only' },
    { maxAttempts: config.max_attempts, maxTokens: config.max_tokens, writeWords: config.write_words, logger },
  );
  let page = request.page;
  const data: Record<string, string | string[][]> = {};
  const screenshots: Array<{ as: string; body: Buffer }> = [];
  for (const step of plan.steps) {
    // Checked again right before running: nothing but reading may reach the page from here.
    if (!isReadOnlyStep(step)) throw new VisualReadRefusedError(`refusing ${describeStep(step)}: the visual tier only reads`);
    const ctx: StepContext = {
      baseUrl: request.baseUrl,
      params: request.tenant ? { tenant: request.tenant } : {},
      sessionLost: request.pack.sessionLost,
      traced: false,
      timeoutMs: config.step_timeout_ms,
    };
    if (step.action === 'extract' && step.mode === 'table') {
      data[step.as] = await extractAriaTable(page, step, ctx);
      continue;
    }
    const result = await runStep(page, step, ctx);
    page = result.page;
    if (result.extracted) data[result.extracted.as] = result.extracted.value;
    if (result.screenshot) screenshots.push(result.screenshot);
  }
  logger.log('planner.visual_read', { url: description.url, steps: plan.steps.length, keys: Object.keys(data), verdictEligible: false });
  return Object.freeze({
    tier: 'visual' as const,
    verdictEligible: false as const,
    data: Object.freeze(data),
    screenshots,
    steps: plan.steps,
    attempts,
    source: {
      url: description.url,
      pageHash: description.hash,
      contract: { fields: description.contract.fields, testIds: description.contract.testIds },
    },
  });
}

/**
 * Reads a table by ARIA roles (row, cell, columnheader) rather than <tr>/<td>:
 * redesigned consoles often draw tables with divs and roles, which is exactly
 * when this tier is used.
 */
async function extractAriaTable(page: Page, step: Extract<Step, { action: 'extract' }>, ctx: StepContext): Promise<string[][]> {
  const root = await scopeRoot(page, step.within, undefined);
  const table = resolveLocator(root, step.target, ctx.params).first();
  await table.waitFor({ state: 'visible', timeout: ctx.timeoutMs });
  const rows = table.getByRole('row');
  const count = await rows.count();
  const out: string[][] = [];
  for (let i = 0; i < count; i++) {
    const row = rows.nth(i);
    const cells = await row.getByRole('cell').or(row.getByRole('columnheader')).allInnerTexts();
    out.push(cells.map((c) => c.replace(/\s+/g, ' ').trim()));
  }
  return out;
}
