import type { Page } from 'playwright-core';
import { z } from 'zod';
import { Locator, Step } from '../src/sitepack/action-language.js';
import { parseOrThrow } from '../src/config/errors.js';
import { createTask, runTask, type RunnerDeps } from './task-runner.js';
import type { TaskRecord } from './task-state.js';

/**
 * The read-only jobs of seed 003 chapter 6, as tasks with fixed plans: no
 * model is involved, the plan is validated by the same rules as a model's,
 * runs through the same persisted loop, and its outputs land in the evidence
 * store. Jobs are data (YAML-able specs), so a schedule is configuration.
 */

const PagePath = z.string().startsWith('/', 'pages are paths on the site, e.g. /diff/list?tenant=acme').max(500);
const Tenant = z.string().regex(/^[a-z][a-z0-9-]{0,40}$/);
const JobName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,60}$/, 'job names are lower-kebab-case');

export const JobSpec = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('download_report'),
      name: JobName,
      tenant: Tenant.optional(),
      /** The page carrying the download link. */
      page: PagePath,
      /** Steps before the download, e.g. choosing a filter and pressing 查询. */
      before: z.array(Step).max(5).default([]),
      link: Locator,
      file: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,80}$/, 'file names are lower-case'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('inspection'),
      name: JobName,
      tenant: Tenant.optional(),
      /** Each page is opened and screenshotted; five per task keeps a plan within ten steps. */
      pages: z
        .array(z.object({ url: PagePath, as: z.string().regex(/^[a-z0-9][a-z0-9-]{0,40}$/) }).strict())
        .min(1)
        .max(5),
    })
    .strict(),
  z
    .object({
      kind: z.literal('extract_table'),
      name: JobName,
      tenant: Tenant.optional(),
      page: PagePath,
      before: z.array(Step).max(5).default([]),
      table: Locator,
      as: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/),
    })
    .strict(),
]);
export type JobSpec = z.infer<typeof JobSpec>;

/** A job on one page: open it, take the job's `before` steps, wait for `target` to show, then `then`. */
function onOnePage(
  spec: { name: string; page: string; before: Step[] },
  what: string,
  target: z.infer<typeof Locator>,
  then: Step[],
): { instruction: string; steps: Step[]; startUrl: string } {
  return {
    instruction: `job ${spec.name}: ${what}`,
    startUrl: spec.page,
    steps: [{ action: 'open', url: spec.page }, ...spec.before, { action: 'wait_for', target, state: 'visible' }, ...then],
  };
}

export function planForJob(spec: JobSpec): { instruction: string; steps: Step[]; startUrl: string } {
  switch (spec.kind) {
    case 'download_report':
      return onOnePage(spec, `download ${spec.file} from ${spec.page}`, spec.link, [
        { action: 'screenshot', as: 'before-download' },
        { action: 'download', target: spec.link, as: spec.file },
      ]);
    case 'inspection':
      return {
        instruction: `job ${spec.name}: inspect ${spec.pages.map((p) => p.url).join(', ')}`,
        startUrl: spec.pages[0]!.url,
        steps: spec.pages.flatMap((p): Step[] => [
          { action: 'open', url: p.url },
          { action: 'screenshot', as: p.as },
        ]),
      };
    case 'extract_table':
      return onOnePage(spec, `extract ${spec.as} from ${spec.page}`, spec.table, [
        { action: 'extract', target: spec.table, as: spec.as, mode: 'table' },
        { action: 'screenshot', as: 'table' },
      ]);
  }
}

/** Creates the job's task and runs it to the end (or to waiting_confirm). */
export async function runJob(input: unknown, page: Page, deps: Omit<RunnerDeps, 'model'>): Promise<TaskRecord> {
  const spec = parseOrThrow(JobSpec, input, 'job');
  const { instruction, steps, startUrl } = planForJob(spec);
  const record = await createTask(
    deps.store,
    { instruction, site: deps.pack.site, tenant: spec.tenant, startUrl, fixedPlan: steps },
    { pack: deps.pack, writeWords: deps.config.write_words },
  );
  return runTask(record.taskId, page, deps);
}
