import assert from 'node:assert/strict';
import { runSoak, type SoakOptions, type SoakReport } from '../../chaos/soak.js';

/**
 * The small soaks the tests run (test/chaos/soak.test.ts, the Settlo soak in test/e2e/settlo-batch.test.ts) share
 * their pace: two runners at concurrency 2, a short claim lease and readback deadline, a fast back-office settle, an
 * operator pass, no kill, no restart and no redesign unless a test asks for them. A test names what it is about.
 */
const SMALL_SOAK = {
  runners: 2,
  killAfter: 0,
  restart: false,
  claimLeaseSeconds: 10,
  readbackDeadlineMs: 4000,
  maxConcurrency: 2,
  redesignRenders: 0,
  operatorRetry: true,
  settleMs: 150,
  timeLimitMs: 8 * 60_000,
} satisfies Partial<SoakOptions>;

/** The back-office kit's five faults, one per bill in turn (`soakEveryKitFault`). */
const EVERY_KIT_FAULT = ['half_success', 'commit_then_timeout', 'error_500', 'slow_ms', 'session_revoked'] as const;

export interface SmallSoak {
  report: SoakReport;
  /** The runner's log and the parts of the report the test names, to print beside a failed assertion. */
  context: string;
}

/** Runs a small soak and returns its report with the context a failed assertion prints. */
export async function runSmallSoak(
  options: Partial<Omit<SoakOptions, 'log'>> & Pick<SoakOptions, 'items' | 'faultRate' | 'seed'>,
  shown: (report: SoakReport) => unknown = (report) => report.verdict,
): Promise<SmallSoak> {
  const lines: string[] = [];
  const report = await runSoak({ ...SMALL_SOAK, ...options, log: (line) => lines.push(line) });
  return { report, context: `${lines.join('\n')}\n${JSON.stringify(shown(report), null, 2)}` };
}

/** What a back office's own words say of the invariants, so a failure reads in its terms. */
export interface InvariantWords {
  /** Why no key may be written twice (e.g. "no bill settled twice"). */
  oneMutationPerKey?: string;
  /** Why no item may be done that the vendor does not show done (e.g. "… that Settlo does not show 已处理"). */
  noFalseSuccess?: string;
  /** Where every item must be (settled, in the takeover queue, reported at routing). */
  noLostItem?: string;
}

/**
 * The invariants every soak must hold, whatever its faults did (docs/chaos.md): at most one vendor mutation per key,
 * no false success, no lost item, no mutation by an identity other than the tenant's, the planned number of items,
 * and the soak's own verdict ok.
 */
export function assertSoakInvariants({ report, context }: SmallSoak, items: number, words: InvariantWords = {}): void {
  const { invariants, counts } = report.verdict;
  const because = (why: string | undefined) => (why ? `${why}\n${context}` : context);
  assert.equal(invariants.maxMutationsPerKey, 1, because(words.oneMutationPerKey));
  assert.deepEqual(invariants.keysWithMoreThanOneMutation, [], because(words.oneMutationPerKey));
  assert.deepEqual(invariants.falseSuccesses, [], because(words.noFalseSuccess));
  assert.deepEqual(invariants.lostItems, [], because(words.noLostItem));
  assert.deepEqual(invariants.unattributedMutations, [], context);
  assert.equal(counts.items, items);
  assert.ok(report.ok, context);
}

/** The first runner ended on its own, cleanly (a soak without a kill). */
export function assertRunnerFinished({ report, context }: SmallSoak): void {
  assert.equal(report.phases[0]?.exitCode, 0, context);
  assert.equal(report.phases[0]?.error, undefined, context);
}

/**
 * The kit-faults soak, the same on every back office built on the kit: five bills, each given one of the kit's five
 * faults in turn; two runners race on the same keys; an operator pass retries what went to takeover. Asserts that the
 * runner finished cleanly and that every invariant holds, and that every fault fired once. Which bill's write reaches
 * the vendor first is a race between the two runners, and now and then one fault's bill is stopped before its
 * commit by another fault every time it is tried (its write never reaches the point where its own fault fires): then
 * the soak is run once more, its invariants asserted too, and each fault must have fired once in one of the two.
 * The first soak's log is printed, so such a run can still be read. Returns the last soak for the back office's own
 * checks.
 */
export async function soakEveryKitFault(
  backOffice: NonNullable<SoakOptions['backOffice']>,
  words: InvariantWords,
  note: (message: string) => void = (message) => console.error(message),
): Promise<SmallSoak> {
  const everyFaultOnce = Object.fromEntries(EVERY_KIT_FAULT.map((kind) => [kind, 1]));
  const soakOnce = async () => {
    const soak = await runSmallSoak({ backOffice, items: 5, faultRate: 1, faultKinds: [...EVERY_KIT_FAULT], seed: 13 }, (report) => ({
      verdict: report.verdict,
      faults: report.faults,
    }));
    assertRunnerFinished(soak);
    assertSoakInvariants(soak, 5, words);
    for (const [kind, n] of Object.entries(soak.report.faults.fired)) assert.ok(n <= 1, `fault ${kind} fired ${n} times\n${soak.context}`);
    return soak;
  };
  const first = await soakOnce();
  const missed = EVERY_KIT_FAULT.filter((kind) => !first.report.faults.fired[kind]);
  if (missed.length === 0) return first;
  note(`the soak did not reach the commit of the bill(s) with ${missed.join(', ')}; running it once more\n${first.context}`);
  const second = await soakOnce();
  const firedInEither = Object.fromEntries(
    EVERY_KIT_FAULT.map((kind) => [kind, Math.max(first.report.faults.fired[kind] ?? 0, second.report.faults.fired[kind] ?? 0)]),
  );
  assert.deepEqual(firedInEither, everyFaultOnce, `every planned fault fired in one of two soaks\n${first.context}\n${second.context}`);
  return second;
}
