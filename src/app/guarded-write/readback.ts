import type { Services } from '../services.js';
import { ReadFailedError, StructuredContractMissingError } from '../../domain/errors.js';
import { pollUntilSettled, type Observation, type ReadbackResult } from '../../domain/readback.js';
import type { SourceObservation } from '../../domain/reason.js';
import { decideNext } from '../../domain/next-after-readback.js';
import type { StoredObject } from '../ports/evidence.js';
import { hasRow } from '../../browser/evidence-screenshot.js';
import { fillTemplate } from '../../sitepack/action-language.js';
import { observeStatus, readContextFor } from '../../browser/vendor-reads.js';
import { browserlessApi } from '../ownership.js';
import { withSession } from '../sessions.js';
import type { ItemState, ReadbackOutcome } from './state.js';
import { heldClaim, itemRow, openDetail, screenshotTo } from './step-support.js';

/**
 * Independent readback in a fresh session (never the write's), polling until
 * settled. Decides what happens next; only here can an item become done.
 */
export async function readback(s: Services, state: ItemState): Promise<ReadbackOutcome> {
  const { item } = state;
  const action = s.pack.actions[item.action]!;
  const policy = s.config.actions[item.action]!;
  const api = await browserlessApi(s, item.identity);
  return withSession(s, item.identity, 'readback', { trace: false, tenant: item.tenant }, async (session) => {
    // Read beside the polls: while this run holds the claim, only this step moves it.
    const claimRead = s.claims.get(item.key);
    claimRead.catch(() => undefined);
    const preStatusOpenUntil = await settleWindowEnd(s, state);
    const evidence: StoredObject[] = [];
    let degraded = false;
    const unreadable: string[] = [];
    // Every source's last reading, for the reason: the source that decided, the ones that could not read, and (when
    // the item is not confirmed) one read of each other source, so a person sees what each of them shows.
    const sources: SourceObservation[] = [];
    let result: ReadbackResult | undefined;
    const poll = { deadlineMs: s.config.write_policy.readback_deadline_ms, intervalMs: s.config.write_policy.readback_poll_ms };
    if (action.verify) {
      if (!api) throw new ReadFailedError(`action ${item.action} is verified through the vendor API, which this site pack lacks`);
      const { apiField, contains } = action.verify;
      const wanted = fillTemplate(contains, { ...item.params, billNo: item.billNo });
      // A separate GET of the item, not the answer to the write: the note must be on the bill.
      result = await pollUntilSettled(
        { targetStatus: 'PRESENT', settlingStatuses: [], preStatus: 'ABSENT', ...(preStatusOpenUntil ? { preStatusOpenUntil } : {}) },
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
            ...(preStatusOpenUntil ? { preStatusOpenUntil } : {}),
          },
          () => observeStatus(source, ctx),
          poll,
        );
        break;
      } catch (error) {
        if (!(error instanceof StructuredContractMissingError)) throw error;
        degraded = true;
        unreadable.push(`${source}: ${error.message}`);
        sources.push({ source, error: error.message, at: new Date().toISOString() });
      }
    }
    if (!result) throw new StructuredContractMissingError(`no readback source could read the item (${unreadable.join('; ')})`);
    // A confirmed verdict after a write whose after picture shows the settled row adds nothing a picture would show.
    const settledWrite = state.write?.afterSettled === true && !state.writeError;
    if (degraded || result.verdict !== 'confirmed' || !settledWrite || s.config.evidence.readback_picture === 'always') {
      // Picture the page the verdict was read from; only an API or file verdict needs the detail page opened.
      // hasRow has scrolled a listed row into view, so the picture is taken as the page stands.
      const verdictOnPage = result.source === 'detail' || (result.source === 'list' && (await hasRow(session.page, itemRow(s, item))));
      if (!verdictOnPage) await openDetail(s, item, session).catch(() => undefined);
      evidence.push(await screenshotTo(s, item, session.page, 'readback.png', { placeRow: false }));
    }
    const claim = await claimRead;
    const decided = decideNext(result, state, policy, claim?.attempts ?? 1);
    const last = result.observations.at(-1);
    if (last) sources.push(toSourceObservation(last));
    if (decided.next === 'takeover' || decided.next === 'compensate') {
      const ctx = { ...readContextFor(s, item.tenant), billNo: item.billNo, session, api };
      for (const source of action.verify ? [] : s.config.write_policy.readback_sources) {
        if (sources.some((o) => o.source === source)) continue;
        sources.push(
          await observeStatus(source, ctx)
            .then(toSourceObservation)
            .catch((error: unknown) => ({
              source,
              error: error instanceof Error ? error.message : String(error),
              at: new Date().toISOString(),
            })),
        );
      }
    }
    if (decided.next === 'retry' && claim) {
      await s.claims.transition(item.key, { ...heldClaim(state), from: ['WRITING'] }, 'CLAIMED', {
        attempts: claim.attempts + 1,
      });
    }
    await s.audit.append(item.key, {
      type: 'readback',
      actor: item.identity,
      data: {
        verdict: result.verdict,
        observed: result.observedStatus,
        // Every state read while polling (an async review shows its interim state before the final one).
        seen: result.observations.map((o) => o.status ?? 'unreadable'),
        source: result.source,
        next: decided.next,
        why: decided.why,
        degraded,
        evidence,
        sources,
      },
    });
    return { ...result, ...decided, degraded, evidence, sources };
  });
}

function toSourceObservation(o: Observation): SourceObservation {
  return {
    source: o.source,
    at: o.at,
    ...(o.status !== undefined ? { status: o.status } : {}),
    ...(o.error !== undefined ? { error: o.error } : {}),
  };
}

/**
 * When the state before the write stops being an answer: the item's last commit click (this run's, or the
 * one an operator's retry or a resumed run inherits) plus readback_deadline_ms, the settle window the config
 * allows the vendor. Undefined when no commit click is on record (a write refused before its commit):
 * nothing can still be settling, and the old state settles as soon as it is seen twice.
 *
 * Without it, a vendor that shows the old state until it applies the change (no interim status) was read
 * as "not applied" two polls after the click; an operator's retry then clicked a write that had landed.
 */
async function settleWindowEnd(s: Services, state: ItemState): Promise<number | undefined> {
  const events = await s.audit.events(state.item.key);
  const lastCommit = events.findLastIndex((e) => e.type === 'write_started');
  if (lastCommit < 0) return undefined;
  // A write the vendor held in its undo window (the action's undoWindowSeconds) reached it only when the window was
  // over: the settle window counts from then, not from the click.
  const sent = events.slice(lastCommit).findLast((e) => e.type === 'undo_window_waited') ?? events[lastCommit]!;
  return Date.parse(sent.at) + s.config.write_policy.readback_deadline_ms;
}
