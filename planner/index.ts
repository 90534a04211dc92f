/**
 * The planner as the `paperclip` CLI dispatches to it (`plan`, `sitepack draft`): the one module of planner/ that
 * src/ may import (.dependency-cruiser.mjs, "product-reaches-scaffolding-through-entry-points").
 */
export { runPlanCommand, type PlanCommandArgs, type PlanCommandDeps, type PlanCommandResult } from './cli.js';
export type { PlanDraftFile } from './drafts.js';
