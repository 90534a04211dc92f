import { isAbsolute, resolve } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { loadConfig } from '../config/load.js';
import type { PlanCommandDeps, PlanCommandResult, PlanDraftFile } from '../../planner/index.js';
import { ConfigPath, parseCommand, TenantId, type Command, type CommandSpec } from './args.js';

/**
 * `paperclip sitepack draft --config <file> --url <path> --instruction "..."`:
 * the onboarding face of the planner. It signs in as the tenant's identity,
 * opens one page, and asks the planner (aria snapshot → whitelisted steps,
 * validated like every plan) for the steps that do what the instruction says
 * on that page. The answer is written as a plan draft and printed as site-pack
 * fragments for a person to review; nothing proposed is executed, and a step
 * that would write is refused by the planner's own rules.
 */

const Flags = z.object({
  config: ConfigPath,
  url: z
    .string()
    .startsWith('/', '--url is a path on the site, e.g. /#/discrepancies or /diff/list?tenant=acme')
    .meta({ value: 'path', description: 'the page to draft from (a path on vendor.base_url)' }),
  instruction: z
    .string()
    .min(1, 'say what the steps should do, e.g. --instruction "search for the discrepancy and open it"')
    .max(2000)
    .meta({ value: 'text', description: 'what the proposed steps should do, in plain words' }),
  tenant: TenantId.optional().meta({ value: 'tenant', description: 'whose identity signs in (required when the config has several)' }),
  'base-url': z.string().optional().meta({ value: 'url', description: 'overrides vendor.base_url of the config' }),
  'planner-config': z.string().optional().meta({ value: 'file', description: 'the planner config (model, limits)' }),
  out: z.string().optional().meta({ value: 'dir', description: 'where the draft is written (default: drafts_dir of the planner config)' }),
});

export const DRAFT_SPEC: CommandSpec<typeof Flags> = {
  name: 'sitepack draft',
  summary: 'asks the planner to propose list or action steps for one page, for review; never writes',
  description: `Signs in as the tenant's identity at the config's vendor.base_url, opens --url,
describes the page (its aria snapshot) and asks the planner for the whitelisted
steps that do what --instruction says. The answer is validated like every plan
(whitelisted actions, semantic locators, no write clicks), written as a plan
draft, and printed as site-pack fragments (list steps, or a read-only action)
to review and copy into the pack. Nothing proposed is executed; the vendor is
not written. See docs/onboarding.md and docs/planner.md. Exit code 0 drafted,
2 no acceptable plan or bad arguments.`,
  flags: Flags,
};

/** The draft's steps as the pack fragments they could become; a person picks one and reviews every step. */
export function proposedFragments(draft: PlanDraftFile): string {
  if (draft.planKind === 'handoff') {
    return [
      `# The instruction needs the pack's action "${draft.sitePackAction}": it is a write and runs only through the guarded path.`,
      `# Its steps are the pack's (actions.${draft.sitePackAction}); nothing is proposed for it here.`,
    ].join('\n');
  }
  const steps = stringifyYaml(draft.steps, { lineWidth: 0 }).trimEnd().split('\n');
  const indent = (prefix: string) => steps.map((line) => `${prefix}${line}`).join('\n');
  return [
    '# Proposed for review (not executed). Check every locator with `paperclip sitepack probe` before relying on it.',
    '# As the way to the list (list.steps), or to one item (list.search / detail.steps, with {{billNo}} where the key goes):',
    'list:',
    '  steps:',
    indent('    '),
    '# Or as a read-only action (writes are written by a person, with their target state, inverse and readback):',
    'actions:',
    '  drafted_read:',
    '    reversibility: read_only',
    '    appliesTo: []   # the statuses it applies to',
    '    tiers:',
    '      browser:',
    '        steps:',
    indent('          '),
  ].join('\n');
}

export async function runSitepackDraft(
  argv: string[],
  deps: PlanCommandDeps = {},
): Promise<{ exitCode: number; result: PlanCommandResult }> {
  const { flags } = parseCommand(DRAFT_SPEC, argv);
  const out = deps.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const configPath = isAbsolute(flags.config) ? flags.config : resolve(process.cwd(), flags.config);
  // The pack is the one the config names, so the draft is judged against the actions it already has.
  const config = loadConfig(configPath);
  const { runPlanCommand } = await import('../../planner/index.js');
  const result = await runPlanCommand(
    {
      instruction: flags.instruction,
      site: isAbsolute(config.vendor.site_pack) ? config.vendor.site_pack : resolve(process.cwd(), config.vendor.site_pack),
      config: configPath,
      start: flags.url,
      ...(flags.tenant ? { tenant: flags.tenant } : {}),
      ...(flags['base-url'] ? { baseUrl: flags['base-url'] } : {}),
      ...(flags['planner-config'] ? { plannerConfig: flags['planner-config'] } : {}),
      ...(flags.out ? { draftsDir: flags.out } : {}),
    },
    { ...deps, out },
  );
  if (result.draft) out(proposedFragments(result.draft));
  return { exitCode: result.exitCode, result };
}

export const draftCommand: Command = { spec: DRAFT_SPEC, run: async (argv) => (await runSitepackDraft(argv)).exitCode };
