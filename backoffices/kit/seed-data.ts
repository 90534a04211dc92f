import { seededRandom } from '../../src/lib/seeded-random.js';

/**
 * Deterministic records for any back office: each tenant (org, ...) draws from its own stream (seed x tenant
 * id), so adding a tenant does not change the others, and numbers its records from 1 in the order of its
 * groups. A back office says what groups a tenant has and how one record is drawn; the seed varies only what
 * its `make` draws.
 */

/** The span every back office's records were last touched in: 27 days from the start of its period. */
const PERIOD_SPAN_MS = 27 * 24 * 3600_000;

export interface Draw<Spec> {
  spec: Spec;
  /** The spec's position in the list. */
  index: number;
  /** The record's number within its spec, from 1. */
  n: number;
  /** The spec's own stream. */
  random: () => number;
}

export interface SeedPlan<Spec extends { id: string }, Kind, R> {
  /** Mixed into the seed so that one seed draws differently on each back office (0: the seed as it is). */
  salt: number;
  /** The groups a spec makes, in numbering order: how many records of which kind. */
  groups(spec: Spec): ReadonlyArray<readonly [count: number, kind: Kind]>;
  make(draw: Draw<Spec>, kind: Kind): R;
}

export function seedRecords<Spec extends { id: string }, Kind, R>(
  seed: number,
  specs: readonly Spec[],
  plan: SeedPlan<Spec, Kind, R>,
): R[] {
  const out: R[] = [];
  specs.forEach((spec, index) => {
    const random = seededRandom(hashString(spec.id, seed ^ plan.salt));
    let n = 0;
    for (const [count, kind] of plan.groups(spec)) {
      for (let i = 0; i < count; i++) out.push(plan.make({ spec, index, n: ++n, random }, kind));
    }
  });
  return out;
}

/** A time in the period that starts at `startMs`, to the whole second. */
export function drawTime(random: () => number, startMs: number): number {
  return startMs + Math.floor((random() * PERIOD_SPAN_MS) / 1000) * 1000;
}

/** One of `choices` (the first if the draw falls off the end). */
export function drawOne<T>(random: () => number, choices: readonly [T, ...T[]]): T {
  return choices[Math.floor(random() * choices.length)] ?? choices[0];
}

/** `cents`, rounded to whole units with chance `share`: real vendor amounts are often whole. */
export function someWhole(random: () => number, cents: number, share: number): number {
  return random() < share ? Math.round(cents / 100) * 100 : cents;
}

/** FNV-1a over the text, started from the seed. */
function hashString(text: string, seed: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}
