import type { Services } from '../services.js';
import { ClaimFencedError, WriteNotCommittedError } from '../../domain/errors.js';
import { writeFailure } from '../../domain/commit-point.js';
import { evidenceKey, type StoredObject } from '../ports/evidence.js';
import { dialogsSeen, runSteps, type StepContext } from '../../browser/executor.js';
import type { OpenedSession } from '../../browser/identity-sessions.js';
import { settled, shows } from '../../browser/settled.js';
import { throwOnWriteFeedback } from '../../browser/write-feedback.js';
import { surfaceOf } from '../../browser/frames.js';
import { stagesOf, type Stage } from '../../sitepack/schema.js';
import type { Step } from '../../sitepack/action-language.js';
import {
  beforeClick,
  doneLine,
  StageUnprovenError,
  unseenAfterCommit,
  withMark,
  type StageFacts,
  type StageMark,
  type StageRecord,
} from '../../domain/stage-proof.js';
import { readContextFor, readParams } from '../../browser/vendor-reads.js';
import { evidenceScreenshot } from '../../browser/evidence-screenshot.js';
import { describeRateLimit, sleepOut } from '../../browser/rate-limits.js';
import { watchCommitRequests } from '../../browser/commit-requests.js';
import { withSession } from '../sessions.js';
import type { ItemState, WriteResult } from './state.js';
import { heldClaim, itemRow, lease } from './step-support.js';
import { proveApproval, type ProvenApproval } from '../approvals/prove-approval.js';
import { deadline, type Deadline } from '../../lib/deadline.js';

/** The page a session drives, held and passed on here; the browser layer does the driving. */
type Page = OpenedSession['page'];

/** The longest a refused commit's Retry-After is sat out before the write step ends (the step has its own deadline). */
const RATE_LIMIT_WAIT_CAP_MS = 10_000;

/**
 * The write itself. The claim moves to WRITING once the commit click's target
 * is found, immediately before the click; what a failure means follows from
 * which side of that point it happened (src/domain/commit-point.ts): before it
 * "not committed", after it ambiguous, and readback decides.
 */
export async function browserWrite(s: Services, state: ItemState): Promise<WriteResult> {
  const { item } = state;
  const ref = heldClaim(state);
  const action = s.pack.actions[item.action]!;
  const params = { ...item.params, billNo: item.billNo, tenant: item.tenant };
  let approval: ProvenApproval | undefined;
  // Which stages committed in earlier attempts of this write (a retry, a resumed run, an operator's retry), and what
  // their done checks saw: read from the claim, the one record every attempt shares. A one-stage action without a
  // done check never needs them (readback alone decides a retry of its stage).
  const browserStages = item.tier === 'browser' && action.tiers.browser ? stagesOf(action.tiers.browser) : [];
  const earlierMarks: StageRecord[] =
    browserStages.length > 1 || browserStages.some((stage) => stage.done) ? ((await s.claims.get(item.key))?.stages ?? []) : [];
  let marks: StageRecord[] = [...earlierMarks];
  const mark = (stage: string, value: StageMark) => {
    marks = withMark(marks, stage, value, new Date().toISOString());
  };
  const toWriting = async () => {
    // The write proves its own approval from the table and the trail, just before the claim moves to
    // WRITING: $.approval is only what someone answered the task token with.
    if (item.needsApproval) approval = await proveApproval(s, item, state.approval);
    return s.claims.transition(item.key, { ...ref, from: ['CLAIMED'] }, 'WRITING', {
      leaseUntil: lease(s, item),
      ...(marks.length > 0 ? { stages: marks } : {}),
    });
  };
  /** Writes the stage marks to the claim (already WRITING): a later attempt decides from them. */
  const recordMarks = () => s.claims.transition(item.key, { ...ref, from: ['WRITING'] }, 'WRITING', { stages: marks });

  if (item.tier === 'api') {
    const api = await s.vendorApi(item.identity);
    await toWriting();
    await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'api' } });
    const exchange = await api.write(action, params, item.key);
    const evidence = [await s.evidence.put(evidenceKey(item, 'api-exchange.json'), JSON.stringify(exchange, null, 2), 'application/json')];
    return { tier: 'api', committed: true, evidence, dialogs: [], ...(approval ? { approval } : {}) };
  }

  const tier = action.tiers.browser;
  const stages = browserStages;
  return withSession(s, item.identity, 'write', { trace: s.config.evidence.write_trace, tenant: item.tenant }, async (session, slot) => {
    const evidence: StoredObject[] = [];
    // After the commit click a lost vendor-session slot does not stop the write (its evidence and readback must
    // follow the click); it is recorded in the trail instead, once.
    const recordSlotLoss = async () => {
      const loss = await slot.check();
      if (!loss) return;
      await s.audit.append(item.key, {
        type: 'session_slot_lost',
        actor: item.identity,
        data: { slot: loss.slot, leaseUntil: new Date(loss.leaseUntil).toISOString(), foundAt: loss.foundAt, afterCommitClick: true },
      });
    };
    // Screenshots are captured in order, on the page as it is at that moment; their uploads run while the next
    // browser action waits on the vendor. Every upload is awaited before the step returns or reports a failure.
    const uploads: Array<Promise<StoredObject>> = [];
    const picture = async (current: Page, name: string) => {
      const shot = await evidenceScreenshot(current, itemRow(s, item));
      uploads.push(s.evidence.put(evidenceKey(item, name), shot, 'image/png'));
    };
    const stored = async () => {
      const settledUploads = await Promise.allSettled(uploads.splice(0));
      for (const u of settledUploads) if (u.status === 'fulfilled') evidence.push(u.value);
      const failed = settledUploads.find((u) => u.status === 'rejected');
      if (failed) throw failed.reason;
    };
    // Snapshot read the pre-state without a browser: the picture before anything is clicked is taken here.
    let needBefore = !state.snapshot?.evidence.some((e) => e.key.endsWith('/before.png'));
    const pictureBefore = async (current: Page) => {
      if (!needBefore) return;
      needBefore = false;
      await picture(current, 'before.png');
    };
    // Set once the upload succeeded: a failed one is tried again when the session closes.
    let traceStored = false;
    const storeTrace = async (trace: Buffer) => {
      const stored = await s.evidence.put(evidenceKey(item, 'trace.zip'), trace, 'application/zip');
      traceStored = true;
      return stored;
    };
    // A traced write's trace holds a DOM snapshot of the commit click; the picture is for what was approved, what
    // cannot be undone, and a write no trace replays.
    const picturesCommit =
      s.config.evidence.before_commit_picture === 'always' ||
      action.reversibility === 'irreversible' ||
      item.needsApproval ||
      !session.traced;
    let committed = false;
    let page = session.page;
    // The vendor's undo window after this run's last commit click (the action's undoWindowSeconds), still to be sat out
    // on the page that clicked before anything navigates or closes it.
    let undoWindow: Deadline | undefined;
    const sitOutUndoWindow = async (stage: string) => {
      const held = undoWindow;
      if (!held) return;
      undoWindow = undefined;
      const waitedMs = Math.round(held.remaining());
      await held.sleep(waitedMs);
      await s.audit.append(item.key, {
        type: 'undo_window_waited',
        actor: item.identity,
        data: { stage, undoWindowSeconds: action.undoWindowSeconds ?? 0, waitedMs },
      });
    };
    // The requests the commit clicks send: a 429 on them (and no request accepted) means the vendor refused the write.
    let commitRequests: ReturnType<typeof watchCommitRequests> | undefined;
    // A page that shows success before its write request is answered loses the write if it is left too soon: nothing
    // navigates or closes the page that clicked while a commit request is in flight (up to COMMIT_REQUEST_WAIT_MS).
    const settleCommitRequests = async (stage: string) => {
      if (!commitRequests) return;
      const seen = await commitRequests.settle(COMMIT_REQUEST_WAIT_MS);
      if (seen.unanswered.length === 0) return;
      await s.audit.append(item.key, {
        type: 'commit_requests_unanswered',
        actor: item.identity,
        data: { stage, waitedMs: seen.waitedMs, requests: seen.unanswered.slice(0, 10) },
      });
    };
    try {
      const ctx: StepContext = {
        baseUrl: s.config.vendor.base_url,
        params: { ...readParams(readContextFor(s, item.tenant)), ...params },
        row: itemRow(s, item),
        sessionLost: s.pack.sessionLost,
        traced: session.traced,
        ...(action.frame ? { frame: action.frame } : {}),
      };
      // Values a step extracts (the amount a confirmation shows) fill later steps, also across stages.
      const extracted: Record<string, string> = {};
      const stageCtx = (): StepContext => ({ ...ctx, params: { ...ctx.params, ...extracted } });
      const alreadyDone: string[] = [];
      // The stages whose first commit click this run has reached (each is marked `committing` on the claim before it).
      const committedStages = new Set<string>();
      // Measured from just before the click (after the picture, the claim's move and the audit entry, which may take a
      // while); a later commit click of the stage starts the window again.
      const startUndoWindow = () => {
        if (action.undoWindowSeconds) undoWindow = deadline(action.undoWindowSeconds * 1000 + UNDO_WINDOW_GRACE_MS);
      };
      const commitStep = async (stage: string, index: number) => {
        const firstOfStage = !committedStages.has(stage);
        committedStages.add(stage);
        if (firstOfStage) mark(stage, 'committing');
        if (committed) {
          if (firstOfStage) await recordMarks();
          await s.audit.append(item.key, { type: 'write_step', actor: item.identity, data: { tier: 'browser', stage, step: index } });
          commitRequests?.clicked();
          startUndoWindow();
          return;
        }
        // Before the claim moves: a page that cannot be pictured fails the write with nothing clicked.
        if (picturesCommit) await picture(page, 'before-commit.png');
        // A write whose vendor-session slot was taken by another holder (its lease ran out) clicks nothing: not
        // committed, retried with a slot of its own (VendorSessionsBusyError).
        await slot.holdOrStop('the commit click');
        // From here on the write may land: a session found gone later must not start the task over.
        session.markActed();
        await toWriting();
        await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'browser', stage, step: index } });
        commitRequests = watchCommitRequests(session.context, new URL(s.config.vendor.base_url).origin);
        committed = true;
        startUndoWindow();
      };
      const doneChecked = (facts: StageFacts, when: 'before_click' | 'after_commit', matched: boolean, decision: DoneDecision) =>
        s.audit.append(item.key, {
          type: 'stage_done_checked',
          actor: item.identity,
          data: { stage: facts.stage, line: facts.line, when, matched, earlier: facts.earlier ?? null, decision },
        });
      /**
       * Once a stage committed and settled, its done check must see the effect in this same run: the check is what a
       * later attempt trusts instead of clicking again. A page that does not show it is opened again once (`reopen`).
       */
      const proveStage = async (stage: Stage, facts: StageFacts, reopen: readonly Step[], timeoutMs: number) => {
        let seen = await shows(page, stage.done!, stageCtx(), timeoutMs);
        if (!seen && reopen.length > 0) {
          page = (await runSteps(page, reopen, stageCtx())).page;
          seen = await shows(page, stage.done!, stageCtx());
        }
        mark(stage.name, seen ? 'seen' : 'unseen');
        await recordMarks();
        await doneChecked(facts, 'after_commit', seen, seen ? 'proceed' : 'stop');
        if (!seen) throw new StageUnprovenError(unseenAfterCommit(facts), { stage: stage.name, line: facts.line });
      };
      // The last stage's check is read once the write has settled (below), on the page the settled wait leaves.
      let finalProof: { stage: Stage; facts: StageFacts; reopen: readonly Step[] } | undefined;
      for (const [index, stage] of stages.entries()) {
        let steps = stage.steps;
        const facts: StageFacts = {
          stage: stage.name,
          line: doneLine(item.action, index),
          hasDone: stage.done !== undefined,
          final: index === stages.length - 1,
          earlier: earlierMarks.find((m) => m.stage === stage.name)?.mark,
        };
        let lead: Step[] = [];
        let matched: boolean | undefined;
        if (stage.done) {
          // The stage's page is opened (its leading open/wait_for/expect steps) and its done check read before any click.
          lead = steps.slice(
            0,
            Math.max(
              0,
              steps.findIndex((step) => !NAVIGATION_STEPS.includes(step.action)),
            ),
          );
          page = (await runSteps(page, lead, stageCtx())).page;
          steps = steps.slice(lead.length);
          matched = await shows(page, stage.done, stageCtx());
        }
        const decided = beforeClick(facts, matched);
        if (matched !== undefined) await doneChecked(facts, 'before_click', matched, decided.decision);
        if (decided.decision === 'stop') throw new StageUnprovenError(decided.reason, { stage: stage.name, line: facts.line });
        if (decided.decision === 'skip') {
          // Proven by an earlier attempt of this write: the stage landed and is not clicked again.
          mark(stage.name, decided.mark);
          alreadyDone.push(stage.name);
          await s.audit.append(item.key, { type: 'stage_already_done', actor: item.identity, data: { stage: stage.name } });
          continue;
        }
        const result = await runSteps(
          page,
          steps,
          stageCtx(),
          async (step, _index, current) => {
            page = current;
            // An open after a commit click leaves the page that sent the write: its request is answered first.
            if (step.action === 'open' && committedStages.has(stage.name)) await settleCommitRequests(stage.name);
            if (!NAVIGATION_STEPS.includes(step.action)) await pictureBefore(current);
          },
          // The commit click's target is found and shows: only now may the claim move (a target never found is not committed).
          async (_step, index) => commitStep(stage.name, index),
        );
        page = result.page;
        Object.assign(extracted, result.extracted);
        // A write in flight or held is lost when its page goes: the next stage, the settled wait and the close wait for it.
        await sitOutUndoWindow(stage.name);
        if (committedStages.has(stage.name)) await settleCommitRequests(stage.name);
        if (!stage.done || !committedStages.has(stage.name)) continue;
        if (facts.final) finalProof = { stage, facts, reopen: tier?.settled?.steps ? [] : lead };
        else await proveStage(stage, facts, lead, tier?.settled?.timeoutMs ?? STAGE_SETTLE_MS);
      }
      if (!committed) {
        // Every stage had landed before: nothing to click; readback decides, from WRITING as always.
        await pictureBefore(page);
        session.markActed();
        await toWriting();
        await s.audit.append(item.key, { type: 'write_started', actor: item.identity, data: { tier: 'browser', alreadyDone } });
        committed = true;
      }
      // The feedback read after the window is the vendor's answer to the write the page sent, not the undo toast.
      await throwOnWriteFeedback(action.frame ? await surfaceOf(page, action.frame).catch(() => page) : page, s.pack.writeFeedback);
      if (commitRequests?.refusal()) throw new Error('the commit request was answered 429');
      const settledPage = tier?.settled ? await settled(page, tier.settled, ctx) : undefined;
      if (settledPage) page = settledPage.page;
      if (finalProof) await proveStage(finalProof.stage, finalProof.facts, finalProof.reopen, settledPage ? 2000 : STAGE_SETTLE_MS);
      // Nothing is clicked after this: the trace is written while the after picture is taken (a DevTools capture
      // where the row can be placed quietly; otherwise a few lookups may or may not make it into the trace), and
      // uploaded with the pictures.
      const [, trace] = await Promise.all([picture(page, 'after.png'), session.stopTrace().catch(() => undefined)]);
      if (trace) uploads.push(storeTrace(trace));
      // Whether the after picture shows the settled page, or the page as it was when the wait ran out.
      await s.audit.append(item.key, {
        type: 'after_pictured',
        actor: item.identity,
        data: { settled: settledPage?.settled ?? null, url: page.url() },
      });
      await stored();
      await recordSlotLoss();
      return {
        tier: 'browser',
        committed: true as const,
        evidence,
        dialogs: dialogsSeen(page),
        afterSettled: settledPage?.settled ?? false,
        ...(approval ? { approval } : {}),
      };
    } catch (caught) {
      session.discardOnClose();
      await stored().catch(() => undefined);
      if (caught instanceof ClaimFencedError) throw caught;
      // The vendor turned the commit request away (429) and accepted none: not committed, whatever the page showed
      // after it; the wait it asked for is sat out here, so a retry after readback does not meet the same limit.
      const refused = committed ? commitRequests?.refusal() : undefined;
      if (refused) await sleepOut(refused.retryAfterMs, RATE_LIMIT_WAIT_CAP_MS);
      const error = refused
        ? new WriteNotCommittedError(
            `${describeRateLimit(refused.request, refused.retryAfterMs)}: not committed (the vendor refused the commit request)`,
            {
              status: 429,
            },
          )
        : caught;
      const shot = await evidenceScreenshot(page, itemRow(s, item)).catch(() => undefined);
      if (shot) evidence.push(await s.evidence.put(evidenceKey(item, 'after.png'), shot, 'image/png'));
      // The trace is stored before the failure is recorded, so the trail lists it with its checksum: a seal takes it
      // from there and never reads the trace (only the auditor may). close() is idempotent; the finally block finds it stored.
      const trace = await session.close().catch(() => undefined);
      if (trace && !traceStored) {
        // A failed upload is tried again in the finally block.
        const storedTrace = await storeTrace(trace).catch(() => undefined);
        if (storedTrace) evidence.push(storedTrace);
      }
      if (committed) await recordSlotLoss().catch(() => undefined);
      await s.audit.append(item.key, {
        type: 'write_failed',
        actor: item.identity,
        data: { committed, error: (error as Error).name, message: (error as Error).message, evidence },
      });
      throw writeFailure(error, committed ? 'after_commit' : 'before_commit');
    } finally {
      commitRequests?.stop();
      const trace = await session.close().catch(() => undefined);
      if (trace && !traceStored) evidence.push(await storeTrace(trace));
    }
  });
}

/**
 * Added to a declared undo window: the page starts its own countdown only once the vendor answered the commit click,
 * and then needs a moment to send the held write. Closing the page while that request is on its way could still lose it.
 */
const UNDO_WINDOW_GRACE_MS = 1000;

/**
 * The longest wait, after a stage's commit clicks (and its undo window), for the requests they sent to be answered
 * before the page that sent them is left: a step's default time. A vendor slower than that is left as before, with
 * `commit_requests_unanswered` in the audit chain; readback decides either way.
 */
const COMMIT_REQUEST_WAIT_MS = 10_000;

/** How long a stage's done check may take to show once the stage committed, when the action names no settle time. */
const STAGE_SETTLE_MS = 5000;

type DoneDecision = 'click' | 'skip' | 'proceed' | 'stop';

/** Steps that only bring a page up: the picture before the write is taken after them, before the first one that acts. */
const NAVIGATION_STEPS: readonly string[] = ['open', 'wait_for', 'expect'];
