import { StructuredContractMissingError } from './errors.js';

/**
 * The rule that keeps a multi-stage write from clicking a committed stage twice: a stage's `done` check is trusted
 * only once it has proven, for this write, that it sees the stage's effect (false before the click, true after).
 * Pure, so every branch is tested without a browser; the browser write (src/app/guarded-write/write.ts) evaluates
 * the checks and records the marks on the claim, so a retry, a resumed run and an operator's retry decide alike.
 *
 * A stage's mark on the claim:
 * - `committing`: its first commit click was about to be dispatched (recorded before the click). Its done check,
 *   if it has one, has not yet been read after it.
 * - `seen`: its done check matched once the stage had committed and settled: the check can see the effect.
 * - `unseen`: it did not: the check cannot be trusted, and the stage is never clicked again for this write.
 */
export type StageMark = 'committing' | 'seen' | 'unseen';

export interface StageRecord {
  stage: string;
  mark: StageMark;
  at: string;
}

/** A stage as the rule sees it: its name, its pack line, whether it has a done check and is the last stage. */
export interface StageFacts {
  stage: string;
  /** Where the stage's done check is in the pack, e.g. `actions.resolve.tiers.browser.stages[0].done`. */
  line: string;
  hasDone: boolean;
  /** The last stage: its effect is what readback reads, so readback (not its done check) decides a retry of it. */
  final: boolean;
  /** This stage's mark from an earlier attempt of the same write, if any. */
  earlier: StageMark | undefined;
}

/** Before a stage's first click: click it, skip it (its effect is proven there), or stop and hand the item over. */
export type BeforeClick = { decision: 'click' } | { decision: 'skip'; mark: 'seen' } | { decision: 'stop'; reason: string };

/**
 * A stage's done check stopped the write: the check matched before the stage's click with nothing proving it, or
 * did not match after the stage committed. Named as a structured-contract failure, which the workflow sends to a
 * person as it is (the pack does not match the site); never "ambiguous", so readback never retries it into a
 * second click.
 */
export class StageUnprovenError extends StructuredContractMissingError {}

/** The pack line of a stage's done check (a `steps` action is one stage without one). */
export function doneLine(action: string, index: number): string {
  return `actions.${action}.tiers.browser.stages[${index}].done`;
}

/** What to do before a stage's click, from its done check's verdict now (`matched`, when it has one) and its earlier mark. */
export function beforeClick(facts: StageFacts, matched: boolean | undefined): BeforeClick {
  const { stage, line, earlier } = facts;
  const named = `stage "${stage}"`;
  if (facts.hasDone && matched) {
    // True now. Only a click of this write, made while the check was false, proves the check sees the effect.
    if (earlier !== undefined) return { decision: 'skip', mark: 'seen' };
    return {
      decision: 'stop',
      reason:
        `the done check of ${named} (${line}) already matches before its click, and no earlier attempt of this write committed the ` +
        'stage: the check may match whatever the page shows, or the effect was made by someone else; nothing was clicked. ' +
        'Check the item by hand and the line with `paperclip sitepack drill`',
    };
  }
  if (earlier === undefined) return { decision: 'click' };
  // The stage committed in an earlier attempt and its effect is not seen now.
  if (earlier === 'unseen') {
    return {
      decision: 'stop',
      reason:
        `the done check of ${named} (${line}) did not recognise its own effect after the stage committed in an earlier ` +
        'attempt; the stage is not clicked again for this write',
    };
  }
  if (earlier === 'seen') {
    return {
      decision: 'stop',
      reason:
        `the done check of ${named} (${line}) saw the stage's effect after its commit in an earlier attempt and no longer ` +
        'does: the vendor may have undone it; the stage is not clicked again for this write',
    };
  }
  // committing: the last stage's effect is the action's target status, which readback has just found not applied.
  if (facts.final) return { decision: 'click' };
  return {
    decision: 'stop',
    reason: facts.hasDone
      ? `stage "${stage}" may have committed in an earlier attempt and its done check (${line}) does not see it: the click ` +
        'may have landed; the stage is not clicked again for this write'
      : `stage "${stage}" committed in an earlier attempt and has no done check, so whether it landed cannot be read; the ` +
        'stage is not clicked again for this write (give it a `done` check: docs/sitepack.md)',
  };
}

/** The reason a write stops when a stage's done check does not match once the stage committed and settled. */
export function unseenAfterCommit(facts: Pick<StageFacts, 'stage' | 'line'>): string {
  return (
    `the done check of stage "${facts.stage}" (${facts.line}) does not recognise its own effect: the stage was committed (clicked once) ` +
    'and settled, and the check still finds nothing; it is not clicked again for this write. Fix the line (`paperclip sitepack drill` ' +
    'shows it) and resolve the takeover'
  );
}

/** The claim's stage records with one stage's mark set (in place of an earlier one), in the order given. */
export function withMark(records: readonly StageRecord[], stage: string, mark: StageMark, at: string): StageRecord[] {
  const rest = records.filter((r) => r.stage !== stage);
  return [...rest, { stage, mark, at }];
}
