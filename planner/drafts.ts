import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { parseOrThrow, ValidationError } from '../src/config/errors.js';
import { Plan, Step } from '../src/sitepack/action-language.js';
import { SiteAction, type SitePack } from '../src/sitepack/schema.js';
import type { AttemptRecord } from './plan.js';
import type { AcceptedPlan } from './plan-validation.js';
import type { PageDescription } from './page-description.js';

/**
 * Draft plan files: what `paperclip plan` writes for a person to review. A
 * draft records what the model saw (the page description's hash), who drafted
 * it, the rejected attempts, and the steps, in the same action language as
 * site packs, so promoting it is copying reviewed steps into a pack action.
 */

export const PlanDraftFile = z
  .object({
    kind: z.literal('paperclip-plan-draft'),
    format: z.literal(1),
    instruction: z.string().min(1),
    site: z.string().min(1),
    tenant: z.string().optional(),
    page: z.object({ url: z.string(), title: z.string(), descriptionHash: z.string().regex(/^[0-9a-f]{64}$/) }).strict(),
    model: z.object({ provider: z.string(), id: z.string() }).strict(),
    draftedAt: z.string().datetime({ offset: true }),
    planKind: z.enum(['read_only', 'reversible', 'handoff']),
    /** Plan-level hand-off to a site-pack action (the guarded write path runs it, not the planner). */
    sitePackAction: z.string().optional(),
    params: z.record(z.string(), z.string()).optional(),
    attempts: z.array(z.object({ attempt: z.number().int(), ok: z.boolean(), reason: z.string().optional() }).strict()),
    steps: z.array(Step).max(10),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.planKind === 'handoff' && !d.sitePackAction) {
      ctx.addIssue({ code: 'custom', path: ['sitePackAction'], message: 'a hand-off draft names the site-pack action it hands over' });
    }
    if (d.planKind !== 'handoff' && Plan.safeParse(d.steps).success === false) {
      ctx.addIssue({ code: 'custom', path: ['steps'], message: 'a draft that is not a hand-off needs 1 to 10 valid steps' });
    }
  });
export type PlanDraftFile = z.infer<typeof PlanDraftFile>;

export interface DraftInput {
  instruction: string;
  site: string;
  tenant?: string;
  page: PageDescription;
  model: { provider: string; id: string };
  plan: AcceptedPlan;
  attempts: AttemptRecord[];
  now?: Date;
}

export function buildDraft(input: DraftInput): PlanDraftFile {
  if (input.plan.kind === 'done') throw new Error('an empty plan is not a draft');
  return parseOrThrow(
    PlanDraftFile,
    {
      kind: 'paperclip-plan-draft',
      format: 1,
      instruction: input.instruction,
      site: input.site,
      tenant: input.tenant,
      page: { url: input.page.url, title: input.page.title, descriptionHash: input.page.hash },
      model: input.model,
      draftedAt: (input.now ?? new Date()).toISOString(),
      planKind: input.plan.kind,
      sitePackAction: input.plan.sitePackAction,
      params: input.plan.params,
      attempts: input.attempts.map((a) => ({ attempt: a.attempt, ok: a.ok, ...(a.reason ? { reason: a.reason } : {}) })),
      steps: input.plan.steps,
    },
    'plan draft',
  );
}

/** Writes the draft as YAML under dir; the name sorts by time and says what it is about. */
export async function writeDraft(dir: string, draft: PlanDraftFile): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = draft.draftedAt.replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  const digest = createHash('sha256').update(draft.instruction).digest('hex').slice(0, 8);
  const path = join(dir, `${stamp}-${draft.site}${draft.tenant ? `-${draft.tenant}` : ''}-${digest}.yaml`);
  const header = [
    '# Paperclip plan draft: review the steps before promoting them into a site-pack action.',
    '# Drafted by a language model from the page described by page.descriptionHash; not executed by being here.',
  ].join('\n');
  await writeFile(path, `${header}\n${stringifyYaml(draft, { lineWidth: 0 })}`, 'utf8');
  return path;
}

export async function loadDraft(path: string): Promise<PlanDraftFile> {
  let raw: unknown;
  try {
    raw = parseYaml(await readFile(path, 'utf8'));
  } catch (error) {
    throw new ValidationError(path, [{ path: '', message: `not valid YAML: ${(error as Error).message}` }]);
  }
  return parseOrThrow(PlanDraftFile, raw, path);
}

/**
 * Turns a reviewed read-only draft into a site-pack action definition (validated
 * with the site-pack schema) for a person to paste into the pack. Writes are
 * not promoted from drafts: their steps, target state and inverse need a
 * person to write them with the guarded path in mind.
 */
export function draftToSiteAction(draft: PlanDraftFile, pack: SitePack, options: { description: string; appliesTo: string[] }): SiteAction {
  if (draft.planKind === 'handoff') throw new Error('a hand-off draft refers to an existing action; there is nothing to promote');
  if (draft.site !== pack.site) throw new Error(`the draft was made for site "${draft.site}", not "${pack.site}"`);
  return parseOrThrow(
    SiteAction,
    {
      description: options.description,
      reversibility: 'read_only',
      appliesTo: options.appliesTo,
      tiers: { browser: { steps: draft.steps } },
    },
    'promoted action',
  );
}
