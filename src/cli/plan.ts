import { z } from 'zod';
import type { PlanCommandArgs } from '../../planner/index.js';
import { ConfigPath, parseCommand, type Command, type CommandSpec } from './args.js';

/** The planner's flags; runPlanCommand validates the values themselves (PlanCommandArgs). */
const Flags = z.object({
  site: z.string().optional().meta({ value: 'pack', description: 'a site id (sitepacks/<id>.yaml) or a pack file' }),
  tenant: z.string().optional().meta({ value: 'tenant', description: 'the tenant to act for (required when the config has several)' }),
  run: z.boolean().default(false).meta({ description: 'execute a read-only or reversible plan step by step' }),
  task: z.string().optional().meta({ value: 'id', description: 'with --run: resume this task' }),
  start: z.string().optional().meta({ value: '/path', description: "the page to plan from (default: the pack's list page)" }),
  'base-url': z.string().optional().meta({ value: 'url', description: 'overrides vendor.base_url of the config' }),
  config: ConfigPath.optional(),
  'planner-config': z.string().optional().meta({ value: 'file', description: 'the planner config (model, limits)' }),
  drafts: z.string().optional().meta({ value: 'dir', description: 'where drafts are written' }),
  store: z.string().optional().meta({ value: 'file|dynamodb', description: 'where task state is kept' }),
  'dynamodb-endpoint': z.string().optional().meta({ value: 'url', description: 'with --store dynamodb' }),
});

export const PLAN_SPEC: CommandSpec<typeof Flags> = {
  name: 'plan',
  summary: 'drafts a whitelisted action plan for an instruction (or runs a read-only/reversible one)',
  description: `Drafts a whitelisted action plan for the instruction from the page's semantic
description, or with --run executes a read-only or reversible plan step by step.
See docs/planner.md.`,
  flags: Flags,
  positionals: [{ name: 'instruction', description: 'what to do, in plain words (quoted)', schema: z.string() }],
};

/** Flags as the planner's own argument object (its schema checks the values). */
export function planArgs(argv: string[]): PlanCommandArgs {
  const { flags: f, positionals } = parseCommand(PLAN_SPEC, argv);
  const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return defined({
    instruction: positionals[0] ?? '',
    site: f.site ?? '',
    tenant: f.tenant,
    run: f.run,
    task: f.task,
    start: f.start,
    baseUrl: f['base-url'],
    config: f.config,
    plannerConfig: f['planner-config'],
    draftsDir: f.drafts,
    store: f.store,
    dynamodbEndpoint: f['dynamodb-endpoint'],
  }) as PlanCommandArgs;
}

export const planCommand: Command = {
  spec: PLAN_SPEC,
  // The planner is loaded only when asked for: it is a product of its own, with a large module graph.
  run: async (argv) => {
    const { runPlanCommand } = await import('../../planner/index.js');
    return (await runPlanCommand(planArgs(argv))).exitCode;
  },
};
