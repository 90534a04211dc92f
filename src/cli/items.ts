import { z } from 'zod';
import type { Services } from '../app/services.js';
import { claimOutcome, rolledBack } from '../app/batch.js';
import { evidenceKey } from '../app/ports/evidence.js';
import { TERMINAL_STATUSES, type Claim } from '../domain/claim.js';
import { TaskId } from '../domain/task.js';
import { parseCommand, RefusedError, TenantId, type Command, type CommandSpec, dataFolderFlags, AwsFlag } from './args.js';

import { openDataSource } from './data-source.js';

/**
 * `paperclip items`: a batch's items as they stand now (from their claims, which every later step updates:
 * a compensation, a takeover resolved), each with the idempotency key an operator command takes.
 */

const Flags = z.object({
  task: TaskId.meta({ value: 'id', description: "the batch's task id (the summary line's task)" }),
  tenant: TenantId.optional().meta({ value: 'tenant', description: "only this tenant (a task id is usually one tenant's)" }),
  json: z.boolean().default(false).meta({ description: 'one JSON line per item instead of the table' }),
  ...dataFolderFlags,
  aws: AwsFlag,
});

export const ITEMS_SPEC: CommandSpec<typeof Flags> = {
  name: 'items',
  summary: "lists a batch's items: key, bill, action, outcome and evidence page",
  description: `Lists the items of one task as they stand now, from their claims: the
idempotency key (what compensate, takeover show and audit verify --key take),
the bill, the action, the outcome and the item's evidence page. A write undone
since by compensate shows as compensated; an irreversible item still waiting
for its approver as awaiting_approval, one still running as in_progress.

Reads the data folder like audit verify (through the Paperclip process that
holds it, or by opening it here), or AWS with --aws.

Exit codes: 0 listed; 2 bad arguments, no data folder, or no item of that task
in it (nothing is listed).`,
  flags: Flags,
};

/** An item as `items` and `run --json-lines` print it. */
export interface ItemLine {
  task: string;
  tenant: string;
  key: string;
  item: string;
  action: string;
  outcome: string;
  reason?: string;
  /** The item's evidence page in the evidence bucket. */
  evidence: string;
}

/**
 * What a claim says the item's outcome is now: the batch summary's word for a settled one (a done write
 * undone since is `compensated`), `awaiting_approval` for an approval-gated item not yet decided, else
 * `in_progress`.
 */
export async function itemOutcome(s: Pick<Services, 'audit' | 'config'>, claim: Claim): Promise<string> {
  const settled = claimOutcome(claim);
  if (settled === 'done' && (await rolledBack(s as Services, claim.key))) return 'compensated';
  if (settled) return settled;
  if (
    !TERMINAL_STATUSES.includes(claim.status) &&
    claim.status === 'CLAIMED' &&
    s.config.write_policy.approval_required.includes(claim.action)
  )
    return 'awaiting_approval';
  return 'in_progress';
}

export async function itemLine(s: Pick<Services, 'audit' | 'config'>, claim: Claim, outcome?: string): Promise<ItemLine> {
  return {
    task: claim.taskId,
    tenant: claim.tenant,
    key: claim.key,
    item: claim.billNo,
    action: claim.action,
    outcome: outcome ?? (await itemOutcome(s, claim)),
    ...(claim.reason ? { reason: claim.reason } : {}),
    evidence: `s3://${s.config.evidence.bucket}/${evidenceKey(claim, 'index.html')}`,
  };
}

/** No item of the task in the folder: said with the tasks that are there. Exit code 2. */
export class NoSuchTaskError extends RefusedError {
  override name = 'NoSuchTaskError';
}

/** The task's items, oldest claim first. */
export async function listItems(s: Services, query: { task: string; tenant?: string | undefined }, where: string): Promise<ItemLine[]> {
  const claims = (await s.claims.byTask(query.task))
    .filter((c) => !query.tenant || c.tenant === query.tenant)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.billNo.localeCompare(b.billNo));
  if (claims.length === 0) {
    const tenants = (query.tenant ? [query.tenant] : s.config.tenants.map((t) => t.id)).map((t) => `evidence/${t}/`);
    const tasks = (await Promise.all(tenants.map((t) => s.evidence.folders(t)))).flat().map((f) => f.split('/').slice(1, 3).join('/'));
    throw new NoSuchTaskError(
      `no item of task ${query.task}${query.tenant ? ` for ${query.tenant}` : ''} in ${where}; ` +
        (tasks.length > 0 ? `its tasks: ${tasks.slice(-10).join(', ')}` : 'it holds no batch yet (paperclip run writes one)'),
    );
  }
  const lines: ItemLine[] = [];
  for (const claim of claims) lines.push(await itemLine(s, claim));
  return lines;
}

export function itemsTable(lines: readonly ItemLine[]): string {
  const rows = [
    ['KEY', 'BILL', 'ACTION', 'OUTCOME', 'EVIDENCE'],
    ...lines.map((l) => [l.key, l.item, l.action, l.outcome, l.evidence.replace(/^s3:\/\/[^/]+\//, '')]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

export async function runItems(argv: string[]): Promise<number> {
  const { flags } = parseCommand(ITEMS_SPEC, argv);
  const source = await openDataSource({ dataDir: flags['data-dir'], configPath: flags.config, aws: flags.aws });
  try {
    const lines = await listItems(source.services, { task: flags.task, tenant: flags.tenant }, source.describe);
    if (flags.json) {
      for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
      return 0;
    }
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l.outcome, (counts.get(l.outcome) ?? 0) + 1);
    process.stdout.write(`${itemsTable(lines)}\n`);
    process.stdout.write(
      `${lines.length} item(s): ${[...counts].map(([o, n]) => `${o} ${n}`).join(', ')}; the pages: npx paperclip evidence` +
        `${flags['data-dir'] === '.paperclip' ? '' : ` --data-dir ${flags['data-dir']}`}, then open /<evidence path>\n`,
    );
    return 0;
  } finally {
    await source.close();
  }
}

export const itemsCommand: Command = { spec: ITEMS_SPEC, run: runItems };
