import { parsePlanArgv, runPlanCommand } from '../planner/cli.js';

export const PLAN_USAGE = `Usage: paperclip plan "<instruction>" --site <pack> [--tenant t] [--run] [--task id]
                      [--start /path] [--base-url URL] [--planner-config file] [--store file|dynamodb]

Drafts a whitelisted action plan for the instruction from the page's semantic description, or
with --run executes a read-only or reversible plan step by step. See docs/planner.md.`;

export async function runPlan(argv: string[]): Promise<number> {
  const result = await runPlanCommand(parsePlanArgv(argv));
  return result.exitCode;
}
