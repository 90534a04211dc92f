import type { AuditEvent } from './audit-chain.js';
import { isEvent } from './audit-events.js';
import type { CommitClick, KnownFacts, KnownVerdict, SourceKind, SourceObservation, StructuredReason } from './known-facts.js';

export { CommitClick, KnownFacts, KnownVerdict, SourceKind, SourceObservation, StructuredReason } from './known-facts.js';

/**
 * What is known about a write when the machine stops: whether its commit click happened, what each place that
 * read the item saw, and what that adds up to. Every takeover reason (and the routing failure's) is rendered from
 * one of these, and the same object is stored with the reason (claim, queue entry, audit event, record.json), so
 * a person reads the facts, not a guess: a write an independent readback source saw applied and a later reading saw
 * reverted is said to be that, never "not committed" or "did not land"; a target state only the writer's own page
 * showed is said to be only that (the page that clicked is never the readback).
 *
 * Pure: the facts come from the item's audit trail and the readback, both passed in.
 */

/** The source name the write's own page is reported under (it is not an independent readback source). */
export const WRITE_PAGE = 'write page';

/** Whether a reading is the writer's own page or an independent readback source (facts stored before `kind`: by name). */
export function kindOf(o: SourceObservation): SourceKind {
  return o.kind ?? (o.source === WRITE_PAGE ? 'writer' : 'readback');
}

/**
 * Whether the commit click happened, from the item's audit trail: every `write_started` is a commit click reached
 * (the claim moved to WRITING immediately before it). The last one decides: followed by the write's after picture
 * or a failure recorded as committed, it was clicked; followed by nothing, the run died or timed out after the
 * claim moved and before the step could say (`unknown`, unless the workflow holds the write's result:
 * `writeReturned`). None: not clicked. An earlier attempt's click counts too: the vendor may hold its effect.
 */
export function commitClickFrom(events: readonly AuditEvent[], writeReturned: boolean): { commitClick: CommitClick; clicks: number } {
  const starts = events.map((e, i) => (isEvent(e, 'write_started') && !(e.data.alreadyDone?.length ?? 0) ? i : -1)).filter((i) => i >= 0);
  // A write whose stages had all landed earlier clicks nothing, but an earlier attempt did.
  const resumed = events.some((e) => isEvent(e, 'write_started') && (e.data.alreadyDone?.length ?? 0) > 0);
  const clicks = starts.length;
  const last = starts.at(-1);
  if (last === undefined) return { commitClick: resumed ? 'clicked' : 'not_clicked', clicks };
  const after = events.slice(last + 1);
  const answered = after.some((e) => isEvent(e, 'after_pictured') || (isEvent(e, 'write_failed') && e.data.committed === true));
  if (answered || writeReturned) return { commitClick: 'clicked', clicks };
  // Only an earlier attempt's click is certain; this attempt's is not.
  return { commitClick: clicks > 1 ? 'clicked' : 'unknown', clicks };
}

/**
 * Every reading of the item in the trail's order: the write page's after each click (a browser write pictures its
 * page once the pack's `settled` check has, or has not, seen the target state), and each readback's sources (the
 * deciding source's last reading, the unreadable ones, and one read of each other source when not confirmed).
 */
export function observationsFrom(events: readonly AuditEvent[], targetStatus: string | undefined): SourceObservation[] {
  const out: SourceObservation[] = [];
  for (const e of events) {
    if (isEvent(e, 'after_pictured')) {
      if (e.data.settled === true && targetStatus) out.push({ source: WRITE_PAGE, kind: 'writer', status: targetStatus, at: e.at });
      else if (e.data.settled === false)
        out.push({ source: WRITE_PAGE, kind: 'writer', error: 'the target state did not show within the settled wait', at: e.at });
    } else if (isEvent(e, 'readback')) {
      if (e.data.sources) out.push(...e.data.sources.map((o) => ({ ...o, kind: 'readback' as const })));
      // A readback recorded before its sources were: its deciding source's last reading.
      else if (e.data.source)
        out.push({ source: e.data.source, kind: 'readback', ...(e.data.observed ? { status: e.data.observed } : {}), at: e.at });
    }
  }
  return out;
}

/** The verdict the readings add up to (see KnownVerdict). `readback` is the readback verdict, when one ran. */
export function knownVerdict(input: {
  observations: readonly SourceObservation[];
  readback: 'confirmed' | 'not_applied' | 'unknown' | undefined;
  targetStatus?: string | undefined;
  preStatus?: string | undefined;
}): KnownVerdict {
  const { observations, readback, targetStatus, preStatus } = input;
  if (!readback) return 'not_read';
  const read = observations.filter((o) => o.status !== undefined);
  if (readback === 'confirmed') return 'applied';
  // Only an independent source's reading of the target counts as "applied": the page that clicked is not one.
  const independent = read.filter((o) => kindOf(o) === 'readback');
  const revertedAfter = (reading: SourceObservation | undefined) =>
    reading !== undefined && preStatus !== undefined && read.slice(read.indexOf(reading) + 1).some((o) => o.status === preStatus);
  const endsOffTarget = read.at(-1)?.status !== targetStatus;
  if (targetStatus !== undefined && endsOffTarget) {
    const appliedRead = independent.find((o) => o.status === targetStatus);
    if (revertedAfter(appliedRead)) return 'applied_then_reverted';
    const writerRead = read.find((o) => kindOf(o) === 'writer' && o.status === targetStatus);
    if (!appliedRead && revertedAfter(writerRead)) return 'shown_to_writer_not_found';
  }
  // Each readback source's last reading: do they agree with each other?
  const lastBySource = new Map<string, string>();
  for (const o of independent) lastBySource.set(o.source, o.status!);
  if (new Set(lastBySource.values()).size > 1) return 'sources_disagree';
  if (readback === 'unknown') return 'inconclusive';
  const settled = read.at(-1)?.status;
  return preStatus === undefined || settled === preStatus ? 'not_applied' : 'settled_elsewhere';
}

/** Builds the reason from the step's headline and the facts (a takeover, a failure). */
export function buildReason(input: {
  headline: string;
  events: readonly AuditEvent[];
  writeReturned: boolean;
  /** This run's readback verdict; its readings are in the trail (the readback event). */
  readback?: 'confirmed' | 'not_applied' | 'unknown' | undefined;
  targetStatus?: string | undefined;
  preStatus?: string | undefined;
}): StructuredReason {
  const click = commitClickFrom(input.events, input.writeReturned);
  const observations = observationsFrom(input.events, input.targetStatus);
  const verdict = knownVerdict({
    observations,
    readback: input.readback,
    targetStatus: input.targetStatus,
    preStatus: input.preStatus,
  });
  return {
    headline: input.headline,
    known: {
      ...click,
      observations,
      verdict,
      ...(input.targetStatus ? { targetStatus: input.targetStatus } : {}),
      ...(input.preStatus ? { preStatus: input.preStatus } : {}),
    },
  };
}

const CLICK_TEXT: Record<CommitClick, string> = {
  not_clicked: 'not clicked',
  clicked: 'clicked',
  unknown: 'unknown (the run stopped after the claim moved to WRITING, before the write could say)',
};

const VERDICT_TEXT: Record<KnownVerdict, string> = {
  applied: 'applied',
  applied_then_reverted: 'applied, then reverted by the vendor',
  shown_to_writer_not_found: 'shown to the writer, not found by any readback source',
  not_applied: 'not applied',
  settled_elsewhere: 'settled in another state',
  sources_disagree: 'the sources disagree',
  inconclusive: 'inconclusive',
  not_read: 'not read back',
};

function seen(o: SourceObservation): string {
  if (o.status !== undefined) return `${o.source}: status=${o.status}`;
  // The write page is not a readback source: what it did not show is said as such.
  return kindOf(o) === 'writer' ? `${o.source}: ${o.error ?? 'no status'}` : `${o.source}: unreadable (${o.error ?? 'no status'})`;
}

/**
 * The reason as text: an applied-then-reverted write, and a target state only the writer was shown, lead with that
 * (whatever the step said, e.g. a vendor's refusal after the click), then the step's own words, then the facts:
 * `shown to the writer, not found by any readback source: … — commit click: clicked; seen: write page: status=PROCESSED;
 * list: status=PENDING; detail: status=PENDING; verdict: shown to the writer, not found by any readback source`.
 */
export function renderReason(reason: StructuredReason): string {
  const { known } = reason;
  const lead =
    known.verdict === 'applied_then_reverted'
      ? `applied then reverted: ${appliedThenReverted(known)}; the step said: ${reason.headline}`
      : known.verdict === 'shown_to_writer_not_found'
        ? `shown to the writer, not found by any readback source: ${shownToWriter(known)}; the step said: ${reason.headline}`
        : reason.headline;
  const seenText = known.observations.length > 0 ? known.observations.map(seen).join('; ') : 'nothing read';
  const clicks = known.clicks > 1 ? ` (${known.clicks} commit clicks for this key)` : '';
  return `${lead} — commit click: ${CLICK_TEXT[known.commitClick]}${clicks}; seen: ${seenText}; verdict: ${VERDICT_TEXT[known.verdict]}`;
}

function appliedThenReverted(known: KnownFacts): string {
  const read = known.observations.filter((o) => o.status !== undefined);
  const applied = read.find((o) => kindOf(o) === 'readback' && o.status === known.targetStatus)!;
  const reverted = read.slice(read.indexOf(applied) + 1).find((o) => o.status === known.preStatus)!;
  return (
    `${applied.source} saw ${applied.status} (the target) at ${applied.at}, then ${reverted.source} saw ${reverted.status} ` +
    `(the state before the write) at ${reverted.at}: the vendor took the change and undid it, it is not a write that never landed`
  );
}

function shownToWriter(known: KnownFacts): string {
  const read = known.observations.filter((o) => o.status !== undefined);
  const shown = read.find((o) => kindOf(o) === 'writer' && o.status === known.targetStatus)!;
  const found = read.slice(read.indexOf(shown) + 1).find((o) => o.status === known.preStatus)!;
  return (
    `the ${shown.source} showed ${shown.status} (the target) at ${shown.at}, then ${found.source} read ${found.status} ` +
    `(the state before the write) at ${found.at}; no readback source saw the target, so whether the vendor took the ` +
    'change and undid it or never took it is not known'
  );
}
