import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseOrThrow, ValidationError } from '../src/config/errors.js';

/**
 * Configuration of the intent planner: which model drafts plans, how long a
 * call may take, how often a bad answer is re-asked, and the budgets that keep
 * prompts bounded. Kept apart from the main config because the planner is an
 * optional layer: the guarded write path never needs a model.
 */

const Provider = z.enum(['bedrock', 'openai', 'scripted']);

/** Words on a button that smell like a vendor write even when no site-pack action describes it. */
export const DEFAULT_WRITE_WORDS = [
  '删除',
  '作废',
  '提交',
  '审批',
  '审核',
  '付款',
  '支付',
  '退款',
  '撤销',
  '保存',
  '确认',
  '结算',
  'delete',
  'submit',
  'approve',
  'refund',
  'pay',
  'save',
  'confirm',
];

export const PlannerConfig = z
  .object({
    provider: Provider,
    /** Bedrock model id (e.g. anthropic.claude-3-5-sonnet-20240620-v1:0) or the OpenAI-compatible model name. */
    model: z.string().min(1, 'name the model id the provider should use'),
    /**
     * bedrock: optional endpoint override (a VPC endpoint, or a local fake in tests);
     * openai: the base URL, required (requests go to {endpoint}/v1/chat/completions).
     */
    endpoint: z.string().url('endpoint must be a URL such as http://127.0.0.1:8000').optional(),
    region: z.string().min(1).default('us-east-1'),
    /** Name of the environment variable holding the bearer key of an OpenAI-compatible endpoint; keys never live in files. */
    api_key_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, 'api_key_env is an environment variable name such as PLANNER_API_KEY')
      .optional(),
    timeout_ms: z.number().int().min(100).max(300_000).default(30_000),
    /** Model calls per plan before giving up: a rejected answer or a failed call each use one. */
    max_attempts: z.number().int().min(1).max(5).default(3),
    max_tokens: z.number().int().min(64).max(8192).default(1024),
    /** Characters of page description sent per prompt. */
    page_budget_chars: z.number().int().min(500).max(50_000).default(4000),
    /** Rows of each table shown to the model; the rest are counted, not shown. */
    table_rows_shown: z.number().int().min(0).max(50).default(3),
    /** Per-step Playwright timeout while executing a plan. */
    step_timeout_ms: z.number().int().min(100).max(120_000).default(5000),
    /** Consecutive failed steps before the task stops in waiting_confirm. */
    max_consecutive_failures: z.number().int().min(1).max(5).default(2),
    /** Steps a single task may execute in total, so a confused model cannot run forever. */
    max_task_steps: z.number().int().min(1).max(1000).default(300),
    history: z
      .object({
        /** Most recent steps shown verbatim. */
        verbatim: z.number().int().min(1).max(50).default(10),
        /** Older steps are summarised in groups of this size. */
        summarise_every: z.number().int().min(1).max(50).default(5),
        /** Summary lines kept; older ones fold into one roll-up line. */
        max_summaries: z.number().int().min(1).max(50).default(6),
      })
      .strict()
      .default({ verbatim: 10, summarise_every: 5, max_summaries: 6 }),
    /** Clicks on elements whose name contains one of these are refused unless a site-pack action covers them. */
    write_words: z.array(z.string().min(1)).default(DEFAULT_WRITE_WORDS),
    drafts_dir: z.string().min(1).default('drafts/plans'),
    state_dir: z.string().min(1).default('.paperclip/planner-tasks'),
    evidence_dir: z.string().min(1).default('.paperclip/evidence'),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.provider === 'openai' && !c.endpoint) {
      ctx.addIssue({
        code: 'custom',
        path: ['endpoint'],
        message: 'the openai provider needs endpoint: the base URL of the OpenAI-compatible server (without /v1)',
      });
    }
  });
export type PlannerConfig = z.infer<typeof PlannerConfig>;
export type PlannerConfigInput = z.input<typeof PlannerConfig>;

export function parsePlannerConfig(value: unknown, source = 'planner config'): PlannerConfig {
  return parseOrThrow(PlannerConfig, value, source);
}

export const PLANNER_CONFIG_ENV = 'PAPERCLIP_PLANNER_CONFIG';
export const DEFAULT_PLANNER_CONFIG_PATH = 'config/planner.local.yaml';

/**
 * Loads the planner config from an explicit path, else $PAPERCLIP_PLANNER_CONFIG,
 * else config/planner.local.yaml.
 */
export function loadPlannerConfig(path?: string): PlannerConfig {
  const chosen = path ?? process.env[PLANNER_CONFIG_ENV] ?? DEFAULT_PLANNER_CONFIG_PATH;
  if (!existsSync(chosen)) {
    throw new ValidationError(chosen, [
      {
        path: '',
        message: `planner config not found; create it (see docs/planner.md) or pass --planner-config / set ${PLANNER_CONFIG_ENV}`,
      },
    ]);
  }
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(chosen, 'utf8'));
  } catch (error) {
    throw new ValidationError(chosen, [{ path: '', message: `not valid YAML: ${(error as Error).message}` }]);
  }
  return parsePlannerConfig(raw, chosen);
}
