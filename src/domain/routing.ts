import type { PaperclipConfig } from '../config/schema.js';
import { z } from 'zod';
import { Reversibility, Tier, type SitePack } from '../sitepack/schema.js';
import { InputRejectedError } from './errors.js';
import { idempotencyKey, WriteTask } from './task.js';
import { own } from '../lib/own.js';
import { canonicalPrincipal, PrincipalError } from './principal.js';
import { checkParams } from '../sitepack/params.js';

/** A task that passed validation and routing: who acts, how, under which policy. */
export const RoutedItem = z.object({
  key: z.string().min(1),
  taskId: z.string().min(1),
  tenant: z.string().min(1),
  billNo: z.string().min(1),
  action: z.string().min(1),
  params: z.record(z.string(), z.string()),
  requestedBy: z.string(),
  identity: z.string().min(1),
  reversibility: Reversibility,
  needsApproval: z.boolean(),
  /** How long an approval may take before the item expires unexecuted. */
  approvalTimeoutSeconds: z.number(),
  tier: Tier,
  inverse: z.string().optional(),
  targetStatus: z.string().optional(),
  compensates: z.string().optional(),
  /**
   * The item's status as the vendor API answered the ownership read at routing, when the pack reads ownership
   * through a browserless API. Snapshot registers it as the pre-state of a browser write without approval instead of
   * asking the same API again a moment later.
   */
  statusAtRouting: z.object({ source: z.literal('api'), status: z.string().min(1), at: z.string().min(1) }).optional(),
  /**
   * The 429s routing met (its ownership read) and the time they and the identity's pace cost, before the claim
   * existed: the Claim step starts the claim's counts with them.
   */
  rateLimitsAtRouting: z.object({ seen: z.number().min(0), waitedMs: z.number().min(0), pacedMs: z.number().min(0) }).optional(),
});
export type RoutedItem = z.infer<typeof RoutedItem>;

/**
 * Validates a raw task and decides identity, tier and approval. Everything here
 * runs before any browser opens; a rejection names the field and the fix.
 */
export function routeTask(raw: unknown, config: PaperclipConfig, pack: SitePack): RoutedItem {
  const size = Buffer.byteLength(JSON.stringify(raw ?? null));
  if (size > config.limits.max_task_bytes) {
    throw new InputRejectedError(`task is ${size} bytes; the limit is ${config.limits.max_task_bytes}`, '(task)');
  }
  const parsed = WriteTask.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || '(task)';
    throw new InputRejectedError(`task.${field}: ${issue?.message ?? 'invalid'}`, field);
  }
  const task = parsed.data;
  const tenant = config.tenants.find((t) => t.id === task.tenant);
  if (!tenant) {
    throw new InputRejectedError(`tenant "${task.tenant}" is not configured; add it under tenants`, 'tenant');
  }
  if (!new RegExp(pack.itemKeyPattern).test(task.billNo)) {
    throw new InputRejectedError(
      `billNo ${JSON.stringify(task.billNo)} is not a bill number of ${pack.site} (expected ${pack.itemKeyPattern})`,
      'billNo',
    );
  }
  const action = own(pack.actions, task.action);
  const policy = own(config.actions, task.action);
  if (!action || !policy) {
    throw new InputRejectedError(
      `action "${task.action}" is not enabled; enabled actions: ${Object.keys(config.actions).join(', ')}`,
      'action',
    );
  }
  if (action.reversibility === 'read_only') {
    throw new InputRejectedError(`action "${task.action}" is read-only; it does not go through the write path`, 'action');
  }
  const identity = config.identities.find((i) => i.id === tenant.identity);
  if (!identity?.tenants.includes(task.tenant)) {
    throw new InputRejectedError(`identity "${tenant.identity}" is not scoped for tenant "${task.tenant}"`, 'tenant');
  }
  const params = { ...(own(tenant.action_params, task.action) ?? {}), ...task.params };
  const problem = checkParams(task.action, action.params, params);
  if (problem) throw new InputRejectedError(`task.params.${problem.param}: ${problem.message}`, `params.${problem.param}`);
  const tier = config.tool_ladder.find((t) => (t === 'api' && action.tiers.api) || (t === 'browser' && action.tiers.browser));
  if (!tier) {
    throw new InputRejectedError(`no tier of tool_ladder (${config.tool_ladder.join(', ')}) can run "${task.action}"`, 'action');
  }
  return {
    key: idempotencyKey(task),
    taskId: task.taskId,
    tenant: task.tenant,
    billNo: task.billNo,
    action: task.action,
    params,
    requestedBy: requester(task.requestedBy, config),
    identity: identity.id,
    reversibility: action.reversibility,
    needsApproval: config.write_policy.approval_required.includes(task.action),
    approvalTimeoutSeconds: config.write_policy.approval_timeout_seconds,
    tier,
    inverse: action.inverse,
    targetStatus: action.targetStatus,
    compensates: task.compensates,
  };
}

/** The requester in the canonical form the self-approval rule compares. */
function requester(raw: string, config: PaperclipConfig): string {
  try {
    return canonicalPrincipal(raw, config.approvals.plus_addressing);
  } catch (error) {
    if (error instanceof PrincipalError)
      throw new InputRejectedError(`task.requestedBy: ${error.message}`, 'requestedBy', {}, { cause: error });
    throw error;
  }
}

/** What routing read about an item's owner (see the site pack's `ownership`). */
export interface OwnershipReading {
  owner?: string;
  /** The owner value the task's tenant has at the vendor. */
  expected: string;
  source: string;
  /** Whether the source shows the item to this identity at all. */
  listed: boolean;
}

/** Checks the bill's owner as read from the vendor; a bill of another tenant never reaches a write session. */
export function assertBillBelongsToTenant(item: RoutedItem, found: OwnershipReading): void {
  if (!found.listed) {
    throw new InputRejectedError(
      `bill ${item.billNo} is not visible to ${item.identity} (${found.source}); it does not belong to tenant "${item.tenant}"`,
      'billNo',
    );
  }
  if (found.owner !== found.expected) {
    throw new InputRejectedError(
      found.owner === undefined
        ? `bill ${item.billNo} shows no owner in ${found.source}, so it cannot be proven to belong to tenant "${item.tenant}"`
        : `bill ${item.billNo} belongs to ${JSON.stringify(found.owner)} (${found.source}), not tenant "${item.tenant}" (${JSON.stringify(found.expected)})`,
      'billNo',
    );
  }
}
