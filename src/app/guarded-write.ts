import type { Services } from './services.js';
import type { Claim } from '../domain/claim.js';
import { decideOnExistingClaim } from '../domain/claim.js';
import { routeTask, type RoutedItem } from '../domain/routing.js';
import {
  AmbiguousOutcomeError,
  ClaimFencedError,
  StructuredContractMissingError,
  WriteNotCommittedError,
  failureMessage,
  ReadFailedError,
} from '../domain/errors.js';
import { pollUntilSettled, type ReadbackResult } from '../domain/readback.js';
import { evidenceKey, type StoredObject } from '../adapters/s3/evidence-store.js';
import { dialogsSeen, firstVisibleText, runSteps, type StepContext } from '../browser/executor.js';
import { evidenceScreenshot, hasRow } from '../browser/evidence-screenshot.js';
import { fillTemplate } from '../sitepack/action-language.js';
import { resolveLocator, scopeRoot } from '../browser/locate.js';
import { stagesOf, type SiteAction } from '../sitepack/schema.js';
import type { Locator, Scope } from '../sitepack/action-language.js';

type Settled = NonNullable<NonNullable<SiteAction['tiers']['browser']>['settled']>;
import type { OpenedSession } from '../browser/identity-sessions.js';
import type { Page } from 'playwright-core';
import { observeStatus, openDetail as openDetailPage, readContextFor, readParams } from './vendor-reads.js';
import { proveOwnership, tokenApi } from './ownership.js';
import { withSession } from './sessions.js';
import { enqueueTakeover } from './takeover/queue.js';
import type { ReadbackSource } from '../sitepack/schema.js';
import { recordClosedItem } from '../evidence/item-closed.js';

/**
 * The guarded-write steps. Each is called by one thin Lambda handler and is
 * written to be re-entered safely: Step Functions may run a step again after a
 * crash, so every state change is conditional on the claim's owner and version.
 */

export interface ClaimRef {
  owner: string;
  version: number;
}

export type ClaimDecision =
  | { decision: 'proceed'; claim: ClaimRef }
  | { decision: 'readback_first'; claim: ClaimRef }
  | { decision: 'skip'; reason: string; status?: string };

export interface SnapshotResult {
  stale: boolean;
  preStatus?: string;
  source: string;
  evidence: StoredObject[];
}

export interface WriteResult {
  tier: string;
  committed: true;
  evidence: StoredObject[];
  dialogs: Array<{ type: string; message: string; accepted: boolean }>;
}

export type NextAfterReadback = 'complete' | 'retry' | 'compensate' | 'takeover';

export interface ReadbackOutcome extends ReadbackResult {
  next: NextAfterReadback;
  why: string;
  degraded: boolean;
  evidence: StoredObject[];
}

/** What the workflow carries between states. */
export interface ItemState {
  item: RoutedItem;
  claim?: ClaimDecision;
  snapshot?: SnapshotResult;
  approval?: { approvalId: string; approver: string; decidedAt: string };
  write?: WriteResult;
  writeError?: { Error: string; Cause?: string };
  readback?: ReadbackOutcome;
  takeoverReason?: { Error: string; Cause?: string };
  compensation?: { rolledBack?: boolean; outcome?: string; Error?: string; Cause?: string };
}

function lease(s: Services, item: RoutedItem): string {
  const seconds = s.config.write_policy.claim_lease_seconds + (item.needsApproval ? s.config.write_policy.approval_timeout_seconds : 0);
  return new Date(Date.now() + seconds * 1000).toISOString();
}

function claimRef(state: ItemState): ClaimRef {
  const claim = state.claim;
  if (!claim || claim.decision === 'skip') throw new Error('this step needs a held claim');
  return claim.claim;
}

const actor = (item: RoutedItem, executionArn?: string) => ({
  identity: item.identity,
  tenant: item.tenant,
  taskId: item.taskId,
  executionArn,
});

/** Validate & route: schema, tenant scope, action policy, and the bill's owner read from the vendor. */
export async function validateAndRoute(s: Services, input: { task: unknown; executionArn: string }): Promise<RoutedItem> {
  const item = routeTask(input.task, s.config, s.pack);
  await proveOwnership(s, item);
  await s.audit.append(item.key, { type: 'routed', actor: item.identity, data: { ...actor(item, input.executionArn), item } });
  return item;
}

export async function takeClaim(s: Services, input: { item: RoutedItem; executionArn: string }): Promise<ClaimDecision> {
  const { item, executionArn } = input;
  const now = new Date().toISOString();
  const fresh: Claim = {
    key: item.key,
    taskId: item.taskId,
    tenant: item.tenant,
    billNo: item.billNo,
    action: item.action,
    identity: item.identity,
    owner: executionArn,
    status: 'CLAIMED',
    version: 1,
    leaseUntil: lease(s, item),
    attempts: 1,
    createdAt: now,
    updatedAt: now,
  };
  if (await s.claims.tryCreate(fresh)) {
    await s.audit.append(item.key, { type: 'claimed', actor: item.identity, data: { owner: executionArn, version: 1 } });
    return { decision: 'proceed', claim: { owner: executionArn, version: 1 } };
  }
  const existing = await s.claims.get(item.key);
  if (!existing) return takeClaim(s, input);
  const decision = decideOnExistingClaim(existing, executionArn, new Date());
  switch (decision.kind) {
    case 'already_terminal':
      return { decision: 'skip', reason: `already ${decision.status}`, status: decision.status };
    case 'in_progress_elsewhere':
      return { decision: 'skip', reason: 'in progress elsewhere', status: existing.status };
    case 'same_owner':
      return existing.status === 'WRITING'
        ? { decision: 'readback_first', claim: { owner: existing.owner, version: existing.version } }
        : { decision: 'proceed', claim: { owner: existing.owner, version: existing.version } };
    case 'take_over_unstarted':
    case 'take_over_for_readback': {
      const taken = await s.claims.takeOver(existing, executionArn, lease(s, item));
      if (!taken) return { decision: 'skip', reason: 'lost the race to take over an abandoned claim', status: existing.status };
      await s.audit.append(item.key, {
        type: 'claim_taken_over',
        actor: item.identity,
        data: { from: existing.owner, owner: executionArn, version: taken.version, status: taken.status },
      });
      const claim = { owner: executionArn, version: taken.version };
      return decision.kind === 'take_over_for_readback' ? { decision: 'readback_first', claim } : { decision: 'proceed', claim };
    }
  }
}

const itemRow = (s: Services, item: RoutedItem) => ({ list: s.pack.list, key: item.billNo });

async function screenshotTo(s: Services, item: RoutedItem, page: Page, name: string): Promise<StoredObject> {
  return s.evidence.put(evidenceKey(item, name), await evidenceScreenshot(page, itemRow(s, item)), 'image/png');
}

async function openDetail(s: Services, item: RoutedItem, session: OpenedSession): Promise<void> {
  if (!s.pack.detail) return;
  await openDetailPage(session, { ...readContextFor(s, item.tenant), billNo: item.billNo });
}

/** Reads the pre-state from an independent source and registers the way back before the way in. */
export async function snapshot(s: Services, state: ItemState): Promise<SnapshotResult> {
  const { item } = state;
  const ref = claimRef(state);
  const action = s.pack.actions[item.action]!;
  return withSession(s, item.identity, 'read', { trace: false }, async (session) => {
    const api = await tokenApi(s, item.identity);
    const observation = await firstObservation(s, item, session, api);
    await openDetail(s, item, session);
    const evidence = [await screenshotTo(s, item, session.page, 'before.png')];
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
      data: { preStatus, source: observation.source, inverse: inverse ?? null, reversibility: item.reversibility, evidence },
    });
    return { stale: false, preStatus, source: observation.source, evidence };
  });
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
  const message = `could not read the state of ${item.billNo} before writing (${failures.join('; ')})`;
  throw contractMissing ? new StructuredContractMissingError(message) : new ReadFailedError(message);
}

/**
 * The write itself. The claim moves to WRITING immediately before the commit
 * click; any failure after that point is ambiguous and goes to readback.
 */
export async function browserWrite(s: Services, state: ItemState): Promise<WriteResult> {
  const { item } = state;
  const ref = claimRef(state);
  const action = s.pack.actions[item.action]!;
  const params = { ...item.params, billNo: item.billNo, tenant: item.tenant };
  const toWriting = () => s.claims.transition(item.key, { ...ref, from: ['CLAIMED'] }, 'WRITING', { leaseUntil: lease(s, item) });

  if (item.tier === 'api') {
    const api = await s.vendorApi(item.identity);
    await toWriting();
    await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'api' } });
    const exchange = await api.write(action, params, item.key);
    const evidence = [await s.evidence.put(evidenceKey(item, 'api-exchange.json'), JSON.stringify(exchange, null, 2), 'application/json')];
    return { tier: 'api', committed: true, evidence, dialogs: [] };
  }

  const tier = action.tiers.browser;
  const stages = tier ? stagesOf(tier) : [];
  const evidence: StoredObject[] = [];
  return withSession(s, item.identity, 'write', { trace: writeTraceEnabled() }, async (session) => {
    let committed = false;
    let page = session.page;
    try {
      const ctx: StepContext = {
        baseUrl: s.config.vendor.base_url,
        params: { ...readParams(readContextFor(s, item.tenant)), ...params },
        row: itemRow(s, item),
        sessionLost: s.pack.sessionLost,
        traced: session.traced,
      };
      // Values a step extracts (the amount a confirmation shows) fill later steps, also across stages.
      const extracted: Record<string, string> = {};
      const alreadyDone: string[] = [];
      const commitStep = async (stage: string, index: number) => {
        if (committed) {
          await s.audit.append(item.key, { type: 'write_step', actor: item.identity, data: { tier: 'browser', stage, step: index } });
          return;
        }
        evidence.push(await screenshotTo(s, item, page, 'before-commit.png'));
        await toWriting();
        await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'browser', stage, step: index } });
        committed = true;
      };
      for (const stage of stages) {
        let steps = stage.steps;
        if (stage.done) {
          // A stage that already landed (a re-entry, or a retry after the first write of several) is not repeated.
          const lead = steps.slice(
            0,
            Math.max(
              0,
              steps.findIndex((step) => !['open', 'wait_for', 'expect'].includes(step.action)),
            ),
          );
          const opened = await runSteps(page, lead, { ...ctx, params: { ...ctx.params, ...extracted } });
          page = opened.page;
          steps = steps.slice(lead.length);
          if (await shows(page, stage.done, { ...ctx, params: { ...ctx.params, ...extracted } })) {
            alreadyDone.push(stage.name);
            await s.audit.append(item.key, { type: 'stage_already_done', actor: item.identity, data: { stage: stage.name } });
            continue;
          }
        }
        const result = await runSteps(page, steps, { ...ctx, params: { ...ctx.params, ...extracted } }, async (step, index, current) => {
          page = current;
          if (step.action === 'click' && step.commit) await commitStep(stage.name, index);
        });
        page = result.page;
        Object.assign(extracted, result.extracted);
      }
      if (!committed) {
        // Every stage had landed before: nothing to click; readback decides, from WRITING as always.
        await toWriting();
        await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'browser', alreadyDone } });
        committed = true;
      }
      await throwOnWriteFeedback(s, page);
      if (tier?.settled) await settled(page, tier.settled, ctx);
      evidence.push(await screenshotTo(s, item, page, 'after.png'));
      return { tier: 'browser', committed: true as const, evidence, dialogs: dialogsSeen(page) };
    } catch (error) {
      session.discardOnClose();
      if (error instanceof ClaimFencedError) throw error;
      const shot = await evidenceScreenshot(page, itemRow(s, item)).catch(() => undefined);
      if (shot) evidence.push(await s.evidence.put(evidenceKey(item, 'after.png'), shot, 'image/png'));
      await s.audit.append(item.key, {
        type: 'write_failed',
        actor: item.identity,
        data: { committed, error: (error as Error).name, message: (error as Error).message, evidence },
      });
      const name = (error as Error).name;
      if (!committed) {
        if (name === 'StructuredContractMissingError' || name === 'SessionLostError') throw error;
        throw new WriteNotCommittedError(`write failed before the commit click: ${(error as Error).message}`);
      }
      if (name === 'SessionLostError' || name === 'WriteNotCommittedError' || name === 'AmbiguousOutcomeError') throw error;
      throw new AmbiguousOutcomeError(`write may have landed: ${(error as Error).message}`);
    } finally {
      const trace = await session.close().catch(() => undefined);
      if (trace) evidence.push(await s.evidence.put(evidenceKey(item, 'trace.zip'), trace, 'application/zip'));
    }
  });
}

/** Whether a locator shows now (after a short wait for a page that renders late). */
async function shows(page: Page, check: { target: Locator; within?: Scope }, ctx: StepContext): Promise<boolean> {
  const root = await scopeRoot(page, check.within, ctx.row, 2000, ctx.params).catch(() => undefined);
  if (!root) return false;
  return resolveLocator(root, check.target, ctx.params)
    .first()
    .waitFor({ state: 'visible', timeout: 2000 })
    .then(() => true)
    .catch(() => false);
}

/**
 * Waits for the page to show the write's settled state before the "after"
 * picture, so the evidence never pairs a success toast with a stale status. A
 * page that does not settle is still pictured: readback, not the page, decides.
 */
async function settled(page: Page, condition: Settled, ctx: StepContext): Promise<void> {
  const root = await scopeRoot(page, condition.within, ctx.row, condition.timeoutMs, ctx.params).catch(() => undefined);
  if (!root) return;
  await resolveLocator(root, condition.target, ctx.params)
    .first()
    .waitFor({ state: condition.state, timeout: condition.timeoutMs })
    .catch(() => undefined);
}

/**
 * Benchmark-only switch: PAPERCLIP_BENCHMARK_ONLY_WRITE_TRACE=off writes without a
 * Playwright trace so `npm run bench` can price the trace (docs in BENCHMARKS.md).
 * Never set it in a deployment: the trace is part of the evidence of every write.
 */
function writeTraceEnabled(): boolean {
  return process.env['PAPERCLIP_BENCHMARK_ONLY_WRITE_TRACE'] !== 'off';
}

/**
 * Reads the page's own feedback after the commit click. It is never the
 * verdict: it only tells readback whether the vendor refused outright or the
 * request timed out, which decides whether a settled negative readback may be
 * followed by another attempt.
 */
async function throwOnWriteFeedback(s: Services, page: Page): Promise<void> {
  // The answer shows up as a live region (status or alert) once the vendor replies; give a slow page a moment.
  await page
    .getByRole('alert')
    .or(page.getByRole('status'))
    .first()
    .waitFor({ state: 'visible', timeout: 3000 })
    .catch(() => undefined);
  const { rejected, timedOut } = s.pack.writeFeedback;
  const text = await firstVisibleText(page, [...rejected, ...timedOut]);
  if (text === undefined) return;
  if (rejected.includes(text)) {
    throw new WriteNotCommittedError(`the vendor answered "${(await page.getByText(text).first().textContent())?.trim()}"`);
  }
  throw new AmbiguousOutcomeError(`the vendor did not answer in time ("${text}"); the write may have landed`);
}

/**
 * Independent readback in a fresh session (never the write's), polling until
 * settled. Decides what happens next; only here can an item become done.
 */
export async function readback(s: Services, state: ItemState): Promise<ReadbackOutcome> {
  const { item } = state;
  const action = s.pack.actions[item.action]!;
  const policy = s.config.actions[item.action]!;
  const api = await tokenApi(s, item.identity);
  return withSession(s, item.identity, 'readback', { trace: false }, async (session) => {
    const evidence: StoredObject[] = [];
    let degraded = false;
    const unreadable: string[] = [];
    let result: ReadbackResult | undefined;
    const poll = { deadlineMs: s.config.write_policy.readback_deadline_ms, intervalMs: s.config.write_policy.readback_poll_ms };
    if (action.verify) {
      if (!api) throw new ReadFailedError(`action ${item.action} is verified through the vendor API, which this site pack lacks`);
      const { apiField, contains } = action.verify;
      const wanted = fillTemplate(contains, { ...item.params, billNo: item.billNo });
      // A separate GET of the item, not the answer to the write: the note must be on the bill.
      result = await pollUntilSettled(
        { targetStatus: 'PRESENT', settlingStatuses: [], preStatus: 'ABSENT' },
        async () => {
          const at = new Date().toISOString();
          const bill = await api.readItem(item.billNo);
          if (!bill) return { source: 'api', at, error: 'bill not visible' };
          return {
            source: 'api',
            at,
            status: JSON.stringify(bill[apiField] ?? null).includes(JSON.stringify(wanted).slice(1, -1)) ? 'PRESENT' : 'ABSENT',
          };
        },
        poll,
      );
    }
    for (const source of action.verify ? [] : s.config.write_policy.readback_sources) {
      try {
        const ctx = { ...readContextFor(s, item.tenant), billNo: item.billNo, session, api };
        result = await pollUntilSettled(
          {
            targetStatus: action.targetStatus ?? 'UNKNOWN',
            settlingStatuses: action.settlingStatuses,
            preStatus: state.snapshot?.preStatus,
          },
          () => observeStatus(source, ctx),
          poll,
        );
        break;
      } catch (error) {
        if (!(error instanceof StructuredContractMissingError)) throw error;
        degraded = true;
        unreadable.push(`${source}: ${error.message}`);
      }
    }
    if (!result) throw new StructuredContractMissingError(`no readback source could read the item (${unreadable.join('; ')})`);
    // Picture the page the verdict was read from; only an API or file verdict needs the detail page opened.
    const verdictOnPage = result.source === 'detail' || (result.source === 'list' && (await hasRow(session.page, itemRow(s, item))));
    if (!verdictOnPage) await openDetail(s, item, session).catch(() => undefined);
    evidence.push(await screenshotTo(s, item, session.page, 'readback.png'));
    const claim = await s.claims.get(item.key);
    const decided = decideNext(result, state, policy, claim?.attempts ?? 1);
    if (decided.next === 'retry' && claim) {
      await s.claims.transition(item.key, { owner: claim.owner, version: claim.version, from: ['WRITING'] }, 'CLAIMED', {
        attempts: claim.attempts + 1,
      });
    }
    await s.audit.append(item.key, {
      type: 'readback',
      actor: item.identity,
      data: {
        verdict: result.verdict,
        observed: result.observedStatus,
        source: result.source,
        next: decided.next,
        why: decided.why,
        degraded,
        evidence,
      },
    });
    return { ...result, ...decided, degraded, evidence };
  });
}

export function decideNext(
  result: ReadbackResult,
  state: ItemState,
  policy: { retry_after_negative_readback: boolean; max_write_attempts: number },
  attempts: number,
): { next: NextAfterReadback; why: string } {
  if (result.verdict === 'confirmed') return { next: 'complete', why: result.reason };
  if (result.verdict === 'unknown') return { next: 'takeover', why: `readback inconclusive: ${result.reason}` };
  const preStatus = state.snapshot?.preStatus;
  if (preStatus !== undefined && result.observedStatus !== preStatus && state.item.reversibility === 'reversible' && state.item.inverse) {
    return { next: 'compensate', why: `the item settled on ${result.observedStatus}, neither ${preStatus} nor the target: undo it` };
  }
  const refusedBeforeCommit = state.writeError?.Error === 'WriteNotCommittedError';
  // The workflow initialises absent results to null, not undefined: a run that starts at Readback carries write: null.
  const resumedAfterCrash = state.write == null && state.writeError == null;
  if ((refusedBeforeCommit || resumedAfterCrash) && policy.retry_after_negative_readback && attempts < policy.max_write_attempts) {
    return { next: 'retry', why: `settled negative readback (${result.reason}) and the action's policy allows another attempt` };
  }
  if (state.write) {
    return { next: 'takeover', why: `false success: the write reported success but ${result.reason}` };
  }
  return { next: 'takeover', why: `write did not land: ${result.reason}` };
}

function outcomeRecord(state: ItemState, outcome: string, executionArn: string, extra: Record<string, unknown> = {}) {
  const { item } = state;
  const evidence = [...(state.snapshot?.evidence ?? []), ...(state.write?.evidence ?? []), ...(state.readback?.evidence ?? [])];
  return {
    outcome,
    key: item.key,
    identity: item.identity,
    tenant: item.tenant,
    taskId: item.taskId,
    billNo: item.billNo,
    action: item.action,
    tier: state.write?.tier ?? item.tier,
    executionArn,
    approval: state.approval ?? null,
    preState: state.snapshot?.preStatus ?? null,
    verdict: state.readback?.verdict ?? null,
    observedStatus: state.readback?.observedStatus ?? null,
    readbackSource: state.readback?.source ?? null,
    degraded: state.readback?.degraded ?? false,
    evidence,
    recordedAt: new Date().toISOString(),
    ...extra,
  };
}

export interface ItemOutcome {
  outcome: string;
  key: string;
  billNo?: string;
  reason?: string;
}

export type CloseAs = 'done' | 'rejected' | 'expired';

/**
 * Closes an item that needs no person: done after a confirmed readback, or
 * rejected / expired before anything was executed.
 */
export async function complete(
  s: Services,
  input: { state: ItemState; executionArn: string; closeAs: CloseAs; reason?: string },
): Promise<ItemOutcome> {
  const { state, executionArn, closeAs } = input;
  const { item } = state;
  const claim = await s.claims.get(item.key);
  if (!claim) throw new Error(`no claim for ${item.key}`);
  if (closeAs === 'done') {
    if (state.readback?.verdict !== 'confirmed') throw new Error('an item is done only after a confirmed readback');
    await s.claims.transition(item.key, { owner: claim.owner, version: claim.version, from: ['WRITING'] }, 'DONE', { outcome: 'done' });
  } else {
    await s.claims.transition(
      item.key,
      { owner: claim.owner, version: claim.version, from: ['CLAIMED'] },
      closeAs === 'rejected' ? 'REJECTED' : 'EXPIRED',
      {
        outcome: closeAs,
        reason: input.reason,
      },
    );
  }
  const record = outcomeRecord(state, closeAs, executionArn, input.reason ? { reason: input.reason } : {});
  // Independent of each other (a retried step rewrites both); the item's page, built next, needs both.
  await Promise.all([
    s.evidence.put(evidenceKey(item, 'record.json'), JSON.stringify(record, null, 2), 'application/json'),
    s.audit.append(item.key, {
      type: closeAs === 'done' ? 'completed' : closeAs,
      actor: item.identity,
      data: { verdict: state.readback?.verdict ?? null, reason: input.reason ?? null },
    }),
  ]);
  await recordClosedItem(s, item, closeAs);
  return { outcome: closeAs, key: item.key, billNo: item.billNo, reason: input.reason };
}

export async function takeover(s: Services, input: { state: ItemState; executionArn: string }): Promise<ItemOutcome> {
  const { state, executionArn } = input;
  const { item } = state;
  const compensation = state.compensation
    ? `; compensation ${state.compensation.rolledBack ? 'rolled it back (verified by readback)' : `failed: ${state.compensation.outcome ?? failureMessage(state.compensation)}`}`
    : '';
  const reason = (state.readback?.why ?? failureMessage(state.takeoverReason)) + compensation;
  const errorName = state.takeoverReason?.Error;
  // Only the run that holds the claim hands the item over: a run fenced out meanwhile must not queue, overwrite records or move the claim.
  const held = state.claim && state.claim.decision !== 'skip' ? state.claim.claim : undefined;
  const ours = (c: Claim | undefined): c is Claim => !!c && (!held || (c.owner === held.owner && c.version === held.version));
  let claim = await s.claims.get(item.key);
  if (ours(claim) && (claim.status === 'CLAIMED' || claim.status === 'WRITING')) {
    try {
      claim = await s.claims.transition(
        item.key,
        { owner: claim.owner, version: claim.version, from: ['CLAIMED', 'WRITING'] },
        'TAKEOVER',
        {
          outcome: 'takeover',
          reason,
        },
      );
    } catch (error) {
      if (!(error instanceof ClaimFencedError)) throw error;
      claim = await s.claims.get(item.key);
    }
  }
  if (!ours(claim) || claim.status !== 'TAKEOVER') {
    await s.audit.append(item.key, {
      type: 'takeover_not_taken',
      actor: item.identity,
      data: { reason, error: errorName ?? null, claimStatus: claim?.status ?? null, claimOwner: claim?.owner ?? null, executionArn },
    });
    return {
      outcome: 'skipped',
      key: item.key,
      billNo: item.billNo,
      reason: `not handed over: the claim is ${claim?.status ?? 'missing'} under another run (${reason})`,
    };
  }
  const record = outcomeRecord(state, 'takeover', executionArn, { reason, error: errorName ?? null });
  await s.evidence.put(evidenceKey(item, 'record.json'), JSON.stringify(record, null, 2), 'application/json');
  const queued = await enqueueTakeover(s, { state, executionArn, claimVersion: claim.version, reason, errorName: errorName ?? null });
  if (queued.change !== 'unchanged') {
    await s.audit.append(item.key, {
      type: 'takeover',
      actor: item.identity,
      data: { reason, error: errorName ?? null, round: queued.entry.round, stage: queued.entry.stage, evidence: queued.entry.evidence },
    });
    await recordClosedItem(s, item, 'takeover');
  }
  return { outcome: 'takeover', key: item.key, billNo: item.billNo, reason };
}

export function rejectedOutcome(task: unknown, error: { Error: string; Cause?: string }): ItemOutcome {
  const billNo = typeof (task as { billNo?: unknown })?.billNo === 'string' ? (task as { billNo: string }).billNo : undefined;
  return { outcome: 'rejected', key: '', billNo, reason: error.Cause ?? error.Error };
}
