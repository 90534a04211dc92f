import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { mapBounded } from '../../lib/map-bounded.js';
import { idempotencyKey, WriteTask } from '../../domain/task.js';
import {
  derivedExecutionName,
  executionArnFor,
  keyOfExecutionName,
  originalTask,
  startNamedExecution,
  waitForExecution,
  type ExecutionResult,
} from './executions.js';

/**
 * Claims whose holder died. A batch re-run cannot reach them: the item's
 * execution is named by its key and that name is taken, so the re-run skips
 * the key while its claim stays CLAIMED or WRITING. This hands each such claim
 * to a new guarded-write execution (named `<key>-resume-v<n>`); its Claim step
 * takes the claim over once the lease has run out, and a WRITING claim is read
 * back first, never clicked blind.
 *
 * A holder counts as gone when its execution is no longer RUNNING (a local
 * runner that was killed leaves them FAILED on restart) and its lease expired:
 * the lease also covers a step that was still running when the execution was
 * stopped.
 *
 * The same name rule loses an item that has no claim at all: its execution
 * ended (FAILED, ABORTED, TIMED_OUT) before the Claim step took one — killed
 * while routing, or a Claim step that failed for good. Nothing was written
 * (no write runs without a claim), but every re-run of the task skips the
 * key by name, so the item would never be routed again. Those are restarted
 * too (`<key>-restart-v<n>`), from the dead execution's own input.
 */

export interface OrphanedClaim {
  claim: Claim;
  ownerStatus: string;
  leaseExpired: boolean;
}

export interface RecoveryResult {
  key: string;
  billNo: string;
  from: string;
  status: string;
  execution?: ExecutionResult;
}

async function unsettledClaims(s: Services, taskIds?: readonly string[]): Promise<Claim[]> {
  const live = (c: Claim) => c.status === 'CLAIMED' || c.status === 'WRITING';
  if (taskIds) return (await Promise.all(taskIds.map((t) => s.claims.byTask(t)))).flat().filter(live);
  return s.claims.unsettled();
}

/** Unsettled claims whose owning execution is not running any more. */
export async function findOrphanedClaims(s: Services, options: { taskIds?: readonly string[]; now?: Date } = {}): Promise<OrphanedClaim[]> {
  const now = (options.now ?? new Date()).getTime();
  const orphans: OrphanedClaim[] = [];
  for (const claim of await unsettledClaims(s, options.taskIds)) {
    const owner = await s.executions.describe(claim.owner);
    if (owner?.status === 'RUNNING') continue;
    orphans.push({ claim, ownerStatus: owner?.status ?? 'MISSING', leaseExpired: new Date(claim.leaseUntil).getTime() <= now });
  }
  return orphans;
}

/** An item whose every execution ended without succeeding before any claim was taken. */
export interface UnclaimedItem {
  key: string;
  task: WriteTask;
  /** The latest dead execution of the key, and how it ended. */
  deadExecution: string;
  deadStatus: string;
  /** The next restart's version (one more than the restarts that died too). */
  nextRestart: number;
}

const ENDED_UNSUCCESSFULLY = ['FAILED', 'ABORTED', 'TIMED_OUT'] as const;

/**
 * Items whose executions all ended without succeeding and that have no claim. Lists only the guarded-write
 * executions that did not succeed (few), never every item of a task.
 */
export async function findUnclaimedItems(s: Services, options: { taskIds?: readonly string[] } = {}): Promise<UnclaimedItem[]> {
  const arn = s.guardedWriteArn();
  const running = new Set((await s.executions.listNames(arn, 'RUNNING')).map((n) => keyOfExecutionName(n)?.key));
  const dead = new Map<string, Array<{ name: string; status: string; restart: number }>>();
  for (const status of ENDED_UNSUCCESSFULLY) {
    for (const name of await s.executions.listNames(arn, status)) {
      const parsed = keyOfExecutionName(name);
      if (!parsed || running.has(parsed.key)) continue;
      const runs = dead.get(parsed.key) ?? [];
      runs.push({ name, status, restart: parsed.purpose === 'restart' ? (parsed.version ?? 0) : 0 });
      dead.set(parsed.key, runs);
    }
  }
  const found: UnclaimedItem[] = [];
  for (const [key, runs] of [...dead].sort(([a], [b]) => a.localeCompare(b))) {
    if (await s.claims.get(key)) continue; // claimed: an orphaned claim (above) or settled, not this case
    const latest = runs.reduce((a, b) => (b.restart > a.restart ? b : a));
    const execution = await s.executions.describe(executionArnFor(arn, latest.name));
    const raw = execution?.input ? (JSON.parse(execution.input) as { task?: unknown }).task : undefined;
    const parsed = WriteTask.safeParse(raw);
    // Only a task whose key is this key: a name is not proof of what the execution was asked to do.
    if (!parsed.success || idempotencyKey(parsed.data) !== key) continue;
    if (options.taskIds && !options.taskIds.includes(parsed.data.taskId)) continue;
    found.push({
      key,
      task: parsed.data,
      deadExecution: executionArnFor(arn, latest.name),
      deadStatus: latest.status,
      nextRestart: Math.max(...runs.map((r) => r.restart)) + 1,
    });
  }
  return found;
}

/**
 * Resumes every orphaned claim through the guarded path, waiting for leases
 * to run out when `waitForLeases` is set (otherwise those are reported and
 * left alone). At most `concurrency` executions at a time.
 */
export async function recoverOrphanedClaims(
  s: Services,
  options: {
    taskIds?: readonly string[];
    waitForLeases?: boolean;
    concurrency?: number;
    requestedBy?: string;
    log?: (line: string) => void;
  } = {},
): Promise<RecoveryResult[]> {
  const log = options.log ?? (() => undefined);
  const scope = options.taskIds ? { taskIds: options.taskIds } : {};
  const orphans = await findOrphanedClaims(s, scope);
  const unclaimed = await findUnclaimedItems(s, scope);
  const concurrency = options.concurrency ?? s.config.limits.max_concurrency;
  return [
    ...(await mapBounded(orphans, concurrency, (orphan) => resumeOne(s, orphan, options, log))),
    ...(await mapBounded(unclaimed, concurrency, (item) => restartOne(s, item, options, log))),
  ];
}

/** Runs an item nothing claimed again, under a new name: its Claim step takes the claim as on a first run. */
async function restartOne(
  s: Services,
  item: UnclaimedItem,
  options: { requestedBy?: string },
  log: (line: string) => void,
): Promise<RecoveryResult> {
  const name = derivedExecutionName(item.key, 'restart', item.nextRestart);
  await s.audit.append(item.key, {
    type: 'orphan_resumed',
    actor: options.requestedBy ?? 'recovery',
    data: { deadOwner: item.deadExecution, ownerStatus: item.deadStatus, claimStatus: 'UNCLAIMED', version: 0, execution: name },
  });
  const executionArn = executionArnFor(s.guardedWriteArn(), name);
  // Two recoveries at once take the same name: the second waits for the first one's run.
  await startNamedExecution(s, name, item.task, { ifExists: 'join' });
  log(`  ${item.task.billNo}: restarted as ${name} (its execution ended ${item.deadStatus} before anything claimed it)`);
  const execution = await waitForExecution(s, executionArn);
  return { key: item.key, billNo: item.task.billNo, from: 'UNCLAIMED', status: 'restarted', execution };
}

async function resumeOne(
  s: Services,
  orphan: OrphanedClaim,
  options: { waitForLeases?: boolean; requestedBy?: string },
  log: (line: string) => void,
): Promise<RecoveryResult> {
  const { claim } = orphan;
  const base = { key: claim.key, billNo: claim.billNo, from: claim.status };
  const waitMs = new Date(claim.leaseUntil).getTime() - Date.now();
  if (waitMs > 0) {
    if (!options.waitForLeases) return { ...base, status: `lease runs until ${claim.leaseUntil}; not resumed` };
    log(`  ${claim.billNo}: ${claim.status} under a dead execution; waiting ${Math.ceil(waitMs / 1000)} s for its lease`);
    await sleep(waitMs + 250);
  }
  const task = await originalTask(s, claim);
  // The takeover in the Claim step bumps the version to claim.version + 1; naming the run after it dedupes concurrent resumers.
  const name = derivedExecutionName(claim.key, 'resume', claim.version + 1);
  await s.audit.append(claim.key, {
    type: 'orphan_resumed',
    actor: options.requestedBy ?? 'recovery',
    data: { deadOwner: claim.owner, ownerStatus: orphan.ownerStatus, claimStatus: claim.status, version: claim.version, execution: name },
  });
  const executionArn = executionArnFor(s.guardedWriteArn(), name);
  // Another process that resumed this claim at the same version took the name: wait for its run instead.
  await startNamedExecution(s, name, task, { ifExists: 'join' });
  log(`  ${claim.billNo}: resumed as ${name} (${claim.status === 'WRITING' ? 'readback first' : 'not yet written'})`);
  const execution = await waitForExecution(s, executionArn);
  return { ...base, status: 'resumed', execution };
}
