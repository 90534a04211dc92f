import { z } from 'zod';
import { KEY_PATTERN, KEY_SHAPE } from '../../domain/task.js';
import { visibleText } from '../../domain/visible-text.js';
import type { Services } from '../services.js';
import type { Claim } from '../../domain/claim.js';
import { ClaimFencedError, NamedError } from '../../domain/errors.js';
import { RESOLUTIONS, type TakeoverEntry, type TakeoverResolution } from '../ports/takeovers.js';
import {
  derivedExecutionName,
  executionArnFor,
  originalTask,
  startNamedExecution,
  waitForExecution,
  type ExecutionResult,
} from './executions.js';
import { own } from '../../lib/own.js';

/**
 * An operator's answer to a takeover item.
 *
 * - done: the operator verified (or did) the write by hand; the claim becomes
 *   DONE with outcome done_by_operator.
 * - abandon: the write will not happen; the claim becomes FAILED.
 * - retry: the item goes through the guarded path again, never around it. The
 *   same claim (same key) is handed to a new execution under a new fencing
 *   version and in WRITING, so that execution reads back first: a write that
 *   landed is confirmed and never clicked again; only a settled negative
 *   readback lets the action's policy allow one more click.
 *
 * The claim moves first and is the arbiter (conditional on owner and version),
 * then the queue entry, then the audit trail records the operator.
 */

export const ResolveRequest = z
  .object({
    key: z.string().regex(KEY_PATTERN, `${KEY_SHAPE} (see paperclip takeover list)`),
    as: z.enum(RESOLUTIONS, { error: `--as must be one of ${RESOLUTIONS.join(', ')}` }),
    note: visibleText('--note', { max: 2000, multiline: true }).pipe(z.string().min(1, 'say what you checked or did (--note "...")')),
    operator: z.email({ message: 'the operator is identified by an email address (--operator you@example.com)' }).toLowerCase(),
  })
  .strict();
export type ResolveRequest = z.infer<typeof ResolveRequest>;

/** The request is well-formed but the item's state does not allow it; nothing was changed. */
export class TakeoverRefusedError extends NamedError {
  override name = 'TakeoverRefusedError';
}

export interface ResolveResult {
  key: string;
  as: ResolveRequest['as'];
  claimStatus: string;
  entry: TakeoverEntry;
  retry?: ExecutionResult;
}

/** Checks everything that can be checked before anything is changed. */
async function preflight(s: Services, request: ResolveRequest): Promise<{ entry: TakeoverEntry; claim: Claim }> {
  const entry = await s.takeovers.get(request.key);
  if (!entry) throw new TakeoverRefusedError(`no takeover item ${request.key}; paperclip takeover list shows the open ones`);
  if (entry.status !== 'OPEN') {
    const r = entry.resolution;
    throw new TakeoverRefusedError(
      `${request.key} is already resolved${r ? ` as ${r.as} by ${r.operator} at ${r.at}` : ''}; nothing changed`,
    );
  }
  const claim = await s.claims.get(request.key);
  if (!claim) throw new TakeoverRefusedError(`${request.key} has no claim; the queue entry is inconsistent, nothing changed`);
  if (claim.status !== 'TAKEOVER') {
    throw new TakeoverRefusedError(
      `the claim of ${request.key} is ${claim.status}, not TAKEOVER; the queue entry is out of date, nothing changed`,
    );
  }
  if (request.as === 'retry' && !own(s.config.actions, claim.action)) {
    throw new TakeoverRefusedError(`action ${claim.action} is no longer enabled in the config; it cannot be retried`);
  }
  return { entry, claim };
}

function lease(s: Services): string {
  return new Date(Date.now() + s.config.write_policy.claim_lease_seconds * 1000).toISOString();
}

export async function resolveTakeover(
  s: Services,
  raw: unknown,
  options: { wait?: boolean; timeoutMs?: number } = {},
): Promise<ResolveResult> {
  const parsed = ResolveRequest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TakeoverRefusedError(`${issue?.path.map(String).join('.') || 'request'}: ${issue?.message ?? 'invalid'}`);
  }
  const request = parsed.data;
  const { entry, claim } = await preflight(s, request);
  const at = new Date().toISOString();
  const fenced = () =>
    new TakeoverRefusedError(`${request.key} changed while it was being resolved (another operator?); nothing changed, look again`);

  let claimStatus: string;
  let retryArn: string | undefined;
  let retryName: string | undefined;
  let retryTask: Awaited<ReturnType<typeof originalTask>> | undefined;
  let moved: Claim;
  try {
    if (request.as === 'retry') {
      retryTask = { ...(await originalTask(s, claim)), requestedBy: request.operator };
      retryName = derivedExecutionName(claim.key, 'retry', claim.version + 1);
      retryArn = executionArnFor(s.guardedWriteArn(), retryName);
      const taken = await s.claims.takeOver(claim, retryArn, lease(s));
      if (!taken) throw fenced();
      // WRITING, not CLAIMED: whatever happened before, the new run must read back before it may click.
      moved = await s.claims.transition(claim.key, { owner: retryArn, version: taken.version, from: ['TAKEOVER'] }, 'WRITING', {
        attempts: 1,
        outcome: 'operator_retry',
        reason: request.note,
        leaseUntil: lease(s),
      });
    } else {
      moved = await s.claims.transition(
        claim.key,
        { owner: claim.owner, version: claim.version, from: ['TAKEOVER'] },
        request.as === 'done' ? 'DONE' : 'FAILED',
        { outcome: request.as === 'done' ? 'done_by_operator' : 'abandoned_by_operator', reason: request.note },
      );
    }
    claimStatus = moved.status;
  } catch (error) {
    if (error instanceof ClaimFencedError) throw fenced();
    throw error;
  }

  const resolution: TakeoverResolution = {
    as: request.as,
    operator: request.operator,
    note: request.note,
    at,
    ...(retryArn ? { retryExecutionArn: retryArn } : {}),
  };
  const resolved = await s.takeovers.resolve(request.key, entry.round, resolution);
  if (!resolved)
    throw new Error(
      `the claim of ${request.key} moved to ${claimStatus} but its queue entry changed meanwhile; check paperclip takeover show ${request.key}`,
    );
  await s.audit.append(request.key, {
    type: 'takeover_resolved',
    actor: request.operator,
    data: {
      as: request.as,
      note: request.note,
      round: entry.round,
      claimStatus,
      previousOwner: claim.owner,
      previousVersion: claim.version,
      version: moved.version,
      ...(retryArn ? { retryExecutionArn: retryArn } : {}),
    },
  });
  // Done or abandoned, the item's question is answered: another task may write it (a retry keeps it, under the same key).
  if (request.as !== 'retry') await s.claims.releaseItem(claim.tenant, claim.billNo, claim.key);
  if (!retryArn || !retryName || !retryTask) return { key: request.key, as: request.as, claimStatus, entry: resolved };

  try {
    await startNamedExecution(s, retryName, retryTask);
  } catch (error) {
    // The retry never started: hand the item back to the operators exactly as it was.
    await s.claims.transition(request.key, { owner: retryArn, version: moved.version, from: ['WRITING'] }, 'TAKEOVER', {
      outcome: 'takeover',
      reason: `operator retry could not start: ${(error as Error).message}`,
    });
    await s.takeovers.reopenUnresolved(request.key, entry.round);
    await s.audit.append(request.key, {
      type: 'takeover_retry_failed',
      actor: request.operator,
      data: { error: (error as Error).message, retryExecutionArn: retryArn },
    });
    throw error;
  }
  if (!options.wait) return { key: request.key, as: request.as, claimStatus, entry: resolved };
  const retry = await waitForExecution(s, retryArn, options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {});
  const after =
    (await s.takeovers.recordRetryOutcome(request.key, entry.round, retry.outcome, retry.reason)) ?? (await s.takeovers.get(request.key))!;
  await s.audit.append(request.key, {
    type: 'takeover_retry_finished',
    actor: request.operator,
    data: { outcome: retry.outcome, reason: retry.reason ?? null, retryExecutionArn: retryArn },
  });
  const finalClaim = await s.claims.get(request.key);
  return { key: request.key, as: request.as, claimStatus: finalClaim?.status ?? claimStatus, entry: after, retry };
}
