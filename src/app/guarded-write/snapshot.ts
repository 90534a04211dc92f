import type { Services } from '../services.js';
import type { RoutedItem } from '../../domain/routing.js';
import {
  InputRejectedError,
  PaperclipError,
  ReadFailedError,
  StructuredContractMissingError,
  VendorFigureMismatchError,
} from '../../domain/errors.js';
import { compareConfirm } from '../../domain/vendor-figures.js';
import type { OpenedSession } from '../../browser/identity-sessions.js';
import { figureNames, type ReadbackSource } from '../../sitepack/schema.js';
import { observeStatus, readContextFor, readFigures } from '../../browser/vendor-reads.js';
import { browserlessApi } from '../ownership.js';
import { withSession } from '../sessions.js';
import type { StoredObject } from '../ports/evidence.js';
import type { ItemState, SnapshotResult } from './state.js';
import { heldClaim, openDetail, screenshotTo } from './step-support.js';

type Observation = Awaited<ReturnType<typeof observeStatus>>;

/**
 * Reads the pre-state from an independent source and registers the way back before the way in.
 *
 * Where the pack has a browserless API and the item is written through the browser without an approval, the
 * pre-state is read through the API alone and no browser session opens here: `before.png` is then taken by the write, in its own session, on the page it
 * starts from and before anything is clicked. An item that needs an approval gets its `before.png` here, because
 * the approval page shows it before any write session exists; a stale item gets one here too, since no write will,
 * and so does an API-tier write, which opens no browser at all.
 *
 * The workflow only comes here when Claim did not already register the pre-state from routing's read
 * (`preStateFromRouting`): an approval, a pack without a browserless API, an API-tier write, or an item that was
 * not in a state the action applies to when routing read it.
 */
export async function snapshot(s: Services, state: ItemState): Promise<SnapshotResult> {
  let result: SnapshotResult;
  try {
    result = await readPreState(s, state);
  } catch (error) {
    throw preStateFailure(error, state.item.billNo);
  }
  // Outside the pre-state failure's wrapping: a typed figure that is not the vendor's is the task's mistake, not a
  // failed read, and its own error class, which the workflow closes as rejected before any approval is requested.
  if (!result.stale) confirmFigures(s, state, result);
  return result;
}

/**
 * The pack's `confirm`: the task's typed parameter must be the vendor's figure, in cents, before anyone is asked to
 * approve it. The figures are already in the trail (`pre_state_registered`), so the rejection can be checked against them.
 */
export function confirmFigures(s: Pick<Services, 'pack'>, state: ItemState, result: SnapshotResult): void {
  const { item } = state;
  const rule = s.pack.actions[item.action]?.confirm;
  if (!rule) return;
  const verdict = compareConfirm({
    rule,
    params: item.params,
    figures: result.figures ?? {},
    where: `actions.${item.action}.confirm`,
    decimal: s.pack.list.decimal,
  });
  if (verdict.kind === 'mismatch') throw new VendorFigureMismatchError(verdict.message, { figures: result.figures ?? {} });
  if (verdict.kind === 'unreadable') throw new StructuredContractMissingError(verdict.message);
}

/**
 * A failed pre-state read, said as what it is. Snapshot runs before the approval request, so an
 * irreversible item that fails here has asked no one yet: the reason (the takeover's, the outcome's)
 * must name this step and the real cause, never read as an approval problem. The error keeps its
 * class, so the workflow's Retry and Catch decide exactly as before, and the original is its cause.
 */
export function preStateFailure(error: unknown, billNo: string): Error {
  const prefix = `pre-state read of ${billNo} failed, before anything was written`;
  if (!(error instanceof Error)) return new ReadFailedError(`${prefix}: ${String(error)}`);
  const message = `${prefix}: ${error.message}`;
  if (error instanceof InputRejectedError) return new InputRejectedError(message, error.field, error.details, { cause: error });
  if (error instanceof PaperclipError) {
    // Every other workflow error takes (message, details, options): see workflowError.
    const Same = error.constructor as new (message: string, details: Record<string, unknown>, options: ErrorOptions) => PaperclipError;
    return new Same(message, error.details, { cause: error });
  }
  const named = new Error(message, { cause: error });
  named.name = error.name;
  return named;
}

async function readPreState(s: Services, state: ItemState): Promise<SnapshotResult> {
  const { item } = state;
  const action = s.pack.actions[item.action]!;
  const api = await browserlessApi(s, item.identity);
  // The vendor's figures are read on its pages, so an action that names some always takes the browser read.
  const figures = figureNames(action);
  if (api && item.tier === 'browser' && !item.needsApproval && figures.length === 0) {
    const observation = await observeStatus('api', { ...readContextFor(s, item.tenant), billNo: item.billNo, api });
    const preStatus = observation.status;
    if (preStatus !== undefined && action.appliesTo.includes(preStatus)) return register(s, state, observation, []);
  }
  return withSession(s, item.identity, 'read', { trace: false, tenant: item.tenant }, async (session) => {
    const observation = await firstObservation(s, item, session, api);
    // Only for an item the action applies to: a stale item is stale, whatever its page shows of the figures.
    const applies = observation.status !== undefined && action.appliesTo.includes(observation.status);
    const read =
      applies && figures.length > 0
        ? await readFigures(session, { ...readContextFor(s, item.tenant), billNo: item.billNo, session, api }, item.action, figures)
        : undefined;
    await openDetail(s, item, session);
    const evidence = [await screenshotTo(s, item, session.page, 'before.png')];
    return register(s, state, observation, evidence, read);
  });
}

/**
 * The pre-state of a browser write without approval, registered from the status the vendor API gave routing when it
 * read the bill's owner (the same API and identity Snapshot would ask, moments earlier, before the claim), when that
 * status is one the action applies to. Claim calls this once it holds the claim, so such an item needs no Snapshot
 * step: no second read of the same API, no browser function. Undefined when Snapshot has to read (and picture) it.
 */
export async function preStateFromRouting(s: Services, state: ItemState): Promise<SnapshotResult | undefined> {
  const { item } = state;
  const seen = item.statusAtRouting;
  if (!seen || item.tier !== 'browser' || item.needsApproval) return undefined;
  // Figures are read on the vendor's pages by Snapshot: routing's API answer does not have them.
  if (figureNames(s.pack.actions[item.action]!).length > 0) return undefined;
  if (!s.pack.actions[item.action]!.appliesTo.includes(seen.status)) return undefined;
  return register(s, state, seen, []);
}

/** Records the pre-state on the claim and in the audit trail: stale, or the inverse registered before any write. */
async function register(
  s: Services,
  state: ItemState,
  observation: Observation,
  evidence: StoredObject[],
  figures?: Record<string, string>,
): Promise<SnapshotResult> {
  const { item } = state;
  const ref = heldClaim(state);
  const action = s.pack.actions[item.action]!;
  const preStatus = observation.status;
  const stale = preStatus === undefined || !action.appliesTo.includes(preStatus);
  if (stale) {
    await s.claims.transition(item.key, { ...ref, from: ['CLAIMED'] }, 'STALE', {
      outcome: 'stale',
      reason: `vendor shows ${preStatus}`,
    });
    await s.audit.append(item.key, { type: 'stale', actor: item.identity, data: { preStatus, expected: action.appliesTo } });
    return { stale: true, preStatus, source: observation.source, evidence };
  }
  const inverse = action.inverse ? { action: action.inverse, targetStatus: preStatus } : undefined;
  await s.claims.transition(item.key, { ...ref, from: ['CLAIMED'] }, 'CLAIMED', {
    preState: { status: preStatus, observedAt: observation.at, source: observation.source },
    inverse,
  });
  await s.audit.append(item.key, {
    type: 'pre_state_registered',
    actor: item.identity,
    data: {
      preStatus,
      source: observation.source,
      inverse: inverse ?? null,
      reversibility: item.reversibility,
      evidence,
      ...(figures ? { figures } : {}),
    },
  });
  return { stale: false, preStatus, source: observation.source, evidence, ...(figures ? { figures } : {}) };
}

/**
 * The pre-state, from the vendor API when the site has one (no page needed),
 * else from the first configured readback source that can read the item.
 */
async function firstObservation(
  s: Services,
  item: RoutedItem,
  session: OpenedSession,
  api: Awaited<ReturnType<Services['vendorApi']>> | undefined,
) {
  const configured = s.config.write_policy.readback_sources;
  const sources: ReadbackSource[] = api && !configured.includes('api') ? ['api', ...configured] : configured;
  // Every source's failure is kept: the reason given is all of them, so none hides another.
  const failures: string[] = [];
  let contractMissing = false;
  for (const source of sources) {
    try {
      const observation = await observeStatus(source, { ...readContextFor(s, item.tenant), billNo: item.billNo, session, api });
      if (observation.status !== undefined) return observation;
      failures.push(`${source}: ${observation.error ?? `does not show ${item.billNo}`}`);
    } catch (error) {
      if (!(error instanceof StructuredContractMissingError)) throw error;
      contractMissing = true;
      failures.push(`${source}: ${error.message}`);
    }
  }
  const message = `no source could read the state of ${item.billNo} (${failures.join('; ')})`;
  throw contractMissing ? new StructuredContractMissingError(message) : new ReadFailedError(message);
}
