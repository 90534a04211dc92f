import { isAbsolute, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { sharedBrowser } from '../src/browser/chromium.js';
import { IdentitySessions } from '../src/browser/identity-sessions.js';
import { runStep } from '../src/browser/executor.js';
import { parseOrThrow, ValidationError } from '../src/config/errors.js';
import { loadConfig } from '../src/config/load.js';
import type { PaperclipConfig } from '../src/config/schema.js';
import { fillTemplate } from '../src/sitepack/action-language.js';
import { loadSitePack } from '../src/sitepack/load.js';
import type { SitePack } from '../src/sitepack/schema.js';
import { loadPlannerConfig, type PlannerConfig } from './config.js';
import { buildDraft, writeDraft, type PlanDraftFile } from './drafts.js';
import { FileEvidenceSink, type EvidenceSink } from './evidence.js';
import { jsonLineLogger, type PlannerLogger } from './log.js';
import { LogNotifier, type Notifier } from './notifier.js';
import { describePage } from './page-description.js';
import { draftPlan, PlanRejectedError } from './plan.js';
import { createPlannerModel, type PlannerModel } from './providers/index.js';
import { DynamoDbTaskStore } from './stores/dynamodb-task-store.js';
import { FileTaskStore } from './stores/file-task-store.js';
import { createTask, runTask } from './task-runner.js';
import { TaskId, type TaskRecord, type TaskStore } from './task-state.js';

/**
 * `paperclip plan "<instruction>" --site <pack> [--tenant t] [--run]`
 *
 * Without --run: drafts a plan for the current page and writes a reviewable
 * draft file; nothing on the vendor side changes. With --run: creates a
 * persisted task and runs it (read-only and page-state steps only; writes are
 * handed off), or resumes an existing task with --task <id>.
 */

export const PlanCommandArgs = z
  .object({
    instruction: z.string().min(1, 'give the instruction in plain words, e.g. "把今天待处理的差异导出成CSV"').max(2000),
    /** A site id (sitepacks/<site>.yaml) or a path to a site-pack file. */
    site: z.string().min(1, 'name the site pack with --site, e.g. --site vendor-sim'),
    tenant: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,40}$/, '--tenant is a tenant id from the config, e.g. acme')
      .optional(),
    run: z.boolean().default(false),
    /** Resume (or run) this task id instead of creating a new one; only with --run. */
    task: TaskId.optional(),
    config: z.string().min(1).default('config/paperclip.local.yaml'),
    plannerConfig: z.string().min(1).optional(),
    /** The page to plan from (a path); defaults to the site pack's list page for the tenant. */
    start: z.string().startsWith('/', '--start is a path on the site, e.g. /diff/list?tenant=acme').optional(),
    /** Overrides vendor.base_url of the config (e.g. the simulator's address). */
    baseUrl: z.string().url('--base-url must be a URL such as http://127.0.0.1:4100').optional(),
    draftsDir: z.string().min(1).optional(),
    store: z.enum(['file', 'dynamodb']).default('file'),
    dynamodbEndpoint: z.string().url().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.task && !a.run) ctx.addIssue({ code: 'custom', path: ['task'], message: '--task resumes a task and needs --run' });
  });
export type PlanCommandArgs = z.input<typeof PlanCommandArgs>;

export interface OpenedPage {
  page: Page;
  close(): Promise<void>;
}

export interface PlanCommandDeps {
  plannerConfig?: PlannerConfig;
  model?: PlannerModel;
  /** Opens a logged-in page for the tenant's identity; defaults to a fresh context on the shared browser. */
  openPage?: (request: { pack: SitePack; config: PaperclipConfig; tenant: string; baseUrl: string }) => Promise<OpenedPage>;
  store?: TaskStore;
  evidence?: EvidenceSink;
  notifier?: Notifier;
  logger?: PlannerLogger;
  /** Human-readable output lines (stdout by default). */
  out?: (line: string) => void;
}

export interface PlanCommandResult {
  /** 0 drafted / succeeded, 1 failed, 2 no acceptable plan, 3 waiting for a person. */
  exitCode: number;
  draftPath?: string;
  draft?: PlanDraftFile;
  task?: TaskRecord;
}

function sitePackPath(site: string): string {
  if (/\.ya?ml$/.test(site) || site.includes('/')) return isAbsolute(site) ? site : resolve(process.cwd(), site);
  if (!/^[a-z][a-z0-9-]{1,40}$/.test(site)) {
    throw new ValidationError('plan command', [{ path: '--site', message: 'a site id (lower-kebab-case) or a path to a .yaml site pack' }]);
  }
  return resolve(process.cwd(), 'sitepacks', `${site}.yaml`);
}

function chooseTenant(config: PaperclipConfig, tenant: string | undefined): PaperclipConfig['tenants'][number] {
  if (tenant === undefined) {
    if (config.tenants.length === 1) return config.tenants[0]!;
    throw new ValidationError('plan command', [
      { path: '--tenant', message: `choose the tenant to act for: ${config.tenants.map((t) => t.id).join(', ')}` },
    ]);
  }
  const found = config.tenants.find((t) => t.id === tenant);
  if (!found) {
    throw new ValidationError('plan command', [
      { path: '--tenant', message: `"${tenant}" is not a tenant of the config; known: ${config.tenants.map((t) => t.id).join(', ')}` },
    ]);
  }
  return found;
}

/** The default page opener: the tenant's own service identity, logged in before anything is planned. */
async function openIdentityPage(request: {
  pack: SitePack;
  config: PaperclipConfig;
  tenant: string;
  baseUrl: string;
}): Promise<OpenedPage> {
  const tenant = chooseTenant(request.config, request.tenant);
  const identity = request.config.identities.find((i) => i.id === tenant.identity)!;
  if (identity.credentials.source !== 'inline') {
    throw new Error(
      `identity ${identity.id} keeps its credentials in Secrets Manager; run the planner where the session layer can read them, or pass an openPage that does`,
    );
  }
  const sessions = new IdentitySessions(sharedBrowser, request.pack, request.baseUrl);
  const session = await sessions.open(
    identity.id,
    { username: identity.credentials.username, password: identity.credentials.password },
    'read',
    { trace: false },
  );
  // This session store lives for one command: close the kept context with it.
  return {
    page: session.page,
    close: async () => {
      await session.close();
      await sessions.closeIdle();
    },
  };
}

export async function runPlanCommand(rawArgs: unknown, deps: PlanCommandDeps = {}): Promise<PlanCommandResult> {
  const args = parseOrThrow(PlanCommandArgs, rawArgs, 'plan command');
  const out = deps.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const logger = deps.logger ?? jsonLineLogger();
  const plannerConfig = deps.plannerConfig ?? loadPlannerConfig(args.plannerConfig);
  const config = loadConfig(args.config);
  const pack = loadSitePack(sitePackPath(args.site));
  const tenant = chooseTenant(config, args.tenant);
  const baseUrl = args.baseUrl ?? config.vendor.base_url;
  const model = deps.model ?? createPlannerModel(plannerConfig, { logger });
  const listOpen = pack.list.steps.find((step) => step.action === 'open');
  const startUrl =
    args.start ??
    fillTemplate(listOpen?.action === 'open' ? listOpen.url : '/', { ...tenant.site_params, tenant: tenant.id, page: '1' }, 'url');

  const opened = await (deps.openPage ?? openIdentityPage)({ pack, config, tenant: tenant.id, baseUrl });
  try {
    if (!args.run) {
      await runStep(
        opened.page,
        { action: 'open', url: startUrl },
        {
          baseUrl,
          params: {},
          sessionLost: pack.sessionLost,
          traced: false,
          timeoutMs: plannerConfig.step_timeout_ms,
        },
      );
      const page = await describePage(opened.page, {
        budgetChars: plannerConfig.page_budget_chars,
        tableRowsShown: plannerConfig.table_rows_shown,
      });
      let outcome: Awaited<ReturnType<typeof draftPlan>>;
      try {
        outcome = await draftPlan(
          model,
          { instruction: args.instruction, tenant: tenant.id, page, pack },
          { maxAttempts: plannerConfig.max_attempts, maxTokens: plannerConfig.max_tokens, writeWords: plannerConfig.write_words, logger },
        );
      } catch (error) {
        if (!(error instanceof PlanRejectedError)) throw error;
        out(`No acceptable plan: ${error.message}`);
        return { exitCode: 2 };
      }
      const draft = buildDraft({
        instruction: args.instruction,
        site: pack.site,
        tenant: tenant.id,
        page,
        model: { provider: model.provider, id: model.modelId },
        plan: outcome.plan,
        attempts: outcome.attempts,
      });
      const draftPath = await writeDraft(args.draftsDir ?? plannerConfig.drafts_dir, draft);
      out(`Draft written: ${draftPath} (${draft.planKind}, ${draft.steps.length} steps, ${outcome.attempts.length} model call(s))`);
      if (draft.sitePackAction)
        out(`The goal needs the site-pack action "${draft.sitePackAction}": it runs only through the guarded write path.`);
      return { exitCode: 0, draftPath, draft };
    }

    const store =
      deps.store ??
      (args.store === 'dynamodb'
        ? new DynamoDbTaskStore(new DynamoDBClient({ region: config.region, endpoint: args.dynamodbEndpoint }), config.prefix)
        : new FileTaskStore(plannerConfig.state_dir));
    const existing = args.task ? await store.get(args.task) : undefined;
    const record =
      existing ??
      (await createTask(
        store,
        { instruction: args.instruction, site: pack.site, tenant: tenant.id, startUrl, taskId: args.task },
        { pack, writeWords: plannerConfig.write_words },
      ));
    const task = await runTask(record.taskId, opened.page, {
      store,
      pack,
      config: plannerConfig,
      baseUrl,
      model,
      notifier: deps.notifier ?? new LogNotifier(logger),
      evidence: deps.evidence ?? new FileEvidenceSink(plannerConfig.evidence_dir),
      logger,
    });
    out(
      JSON.stringify({
        task: task.taskId,
        status: task.status,
        outcome: task.result?.outcome,
        steps: task.stepsExecuted,
        outputs: task.outputs.map((o) => o.key),
        ...(task.result?.handoff ? { handoff: task.result.handoff.sitePackAction } : {}),
        ...(task.result?.reason ? { reason: task.result.reason } : {}),
      }),
    );
    const exitCode = task.status === 'succeeded' ? 0 : task.status === 'waiting_confirm' ? 3 : task.status === 'running' ? 3 : 1;
    return { exitCode, task };
  } finally {
    await opened.close();
  }
}
