import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { mapBounded } from '../../lib/map-bounded.js';
import {
  derivedExecutionName,
  executionArnFor,
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
  const orphans = await findOrphanedClaims(s, options.taskIds ? { taskIds: options.taskIds } : {});
  return mapBounded(orphans, options.concurrency ?? s.config.limits.max_concurrency, (orphan) => resumeOne(s, orphan, options, log));
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
