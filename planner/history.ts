import { z } from 'zod';
import { Step } from '../src/sitepack/action-language.js';
import { describeStep } from './plan-validation.js';

/**
 * A task's step history, kept bounded as it grows: the most recent steps
 * verbatim, older ones summarised in groups, and the oldest summaries folded
 * into one roll-up of counts. The same compressed form is stored with the task
 * and shown to the model, so neither the prompt nor the stored record grows
 * with the length of a run (seed 003, 5.4: a model fed a hundred raw steps
 * starts replaying old ones). Every step is also logged as it happens, so the
 * full sequence is never lost.
 */

export const HistoryEntry = z
  .object({
    seq: z.number().int().min(1),
    round: z.number().int().min(1),
    step: Step,
    ok: z.boolean(),
    error: z.string().max(400).optional(),
    output: z.string().max(200).optional(),
    url: z.string().max(400).optional(),
    at: z.string(),
  })
  .strict();
export type HistoryEntry = z.infer<typeof HistoryEntry>;

const Counts = z.object({
  fromSeq: z.number().int(),
  toSeq: z.number().int(),
  steps: z.number().int(),
  failed: z.number().int(),
  actions: z.record(z.string(), z.number().int()),
});

export const HistorySummary = Counts.extend({ text: z.string().max(400) }).strict();
export type HistorySummary = z.infer<typeof HistorySummary>;

export const CompressedHistory = z
  .object({
    rollup: Counts.strict().optional(),
    summaries: z.array(HistorySummary),
    recent: z.array(HistoryEntry),
  })
  .strict();
export type CompressedHistory = z.infer<typeof CompressedHistory>;

export interface HistorySettings {
  verbatim: number;
  summariseEvery: number;
  maxSummaries: number;
}

export const EMPTY_HISTORY: CompressedHistory = { summaries: [], recent: [] };

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function shortStep(entry: HistoryEntry): string {
  return `${cut(describeStep(entry.step), 48)}${entry.ok ? '' : ' (failed)'}`;
}

function countsOf(entries: readonly HistoryEntry[]): z.infer<typeof Counts> {
  const actions: Record<string, number> = {};
  for (const e of entries) actions[e.step.action] = (actions[e.step.action] ?? 0) + 1;
  return {
    fromSeq: entries[0]!.seq,
    toSeq: entries[entries.length - 1]!.seq,
    steps: entries.length,
    failed: entries.filter((e) => !e.ok).length,
    actions,
  };
}

function merge(a: z.infer<typeof Counts>, b: z.infer<typeof Counts>): z.infer<typeof Counts> {
  const actions = { ...a.actions };
  for (const [k, v] of Object.entries(b.actions)) actions[k] = (actions[k] ?? 0) + v;
  return {
    fromSeq: Math.min(a.fromSeq, b.fromSeq),
    toSeq: Math.max(a.toSeq, b.toSeq),
    steps: a.steps + b.steps,
    failed: a.failed + b.failed,
    actions,
  };
}

export function appendHistory(history: CompressedHistory, entry: HistoryEntry, settings: HistorySettings): CompressedHistory {
  const recent = [...history.recent, entry];
  let summaries = [...history.summaries];
  let rollup = history.rollup;
  // Summarise only whole groups, so "every 5 steps" holds: recent keeps verbatim..verbatim+4 entries.
  while (recent.length >= settings.verbatim + settings.summariseEvery) {
    const group = recent.splice(0, settings.summariseEvery);
    const text = cut(group.map(shortStep).join('; '), 400);
    summaries.push({ ...countsOf(group), text });
  }
  while (summaries.length > settings.maxSummaries) {
    const [oldest, ...rest] = summaries;
    const { text: _dropped, ...counts } = oldest!;
    rollup = rollup ? merge(rollup, counts) : counts;
    summaries = rest;
  }
  return { ...(rollup ? { rollup } : {}), summaries, recent };
}

/** The history as the model sees it: roll-up, summaries, then recent steps verbatim. */
export function renderHistory(history: CompressedHistory): string {
  const lines: string[] = [];
  if (history.rollup) {
    const r = history.rollup;
    const actions = Object.entries(r.actions)
      .map(([k, v]) => `${k}×${v}`)
      .join(', ');
    lines.push(`steps ${r.fromSeq}-${r.toSeq}: ${r.steps} steps, ${r.failed} failed (${actions})`);
  }
  for (const s of history.summaries) lines.push(`steps ${s.fromSeq}-${s.toSeq}: ${s.text}`);
  for (const e of history.recent) {
    const outcome = e.ok ? 'ok' : `FAILED: ${cut(e.error ?? 'unknown error', 160)}`;
    const output = e.output ? ` -> ${cut(e.output, 80)}` : '';
    lines.push(`#${e.seq} ${cut(JSON.stringify(e.step), 220)} ${outcome}${output}`);
  }
  return lines.join('\n');
}
