import { z } from 'zod';
import { ACTION_NAMES, MAX_PLAN_STEPS, Plan, type Step, type Locator } from '../src/sitepack/action-language.js';
import type { Reversibility, SitePack } from '../src/sitepack/schema.js';

/**
 * Everything a model answer must pass before a single step runs. Each check
 * returns a reason written for the model (it is sent back on a re-ask) and for
 * the person reading the draft.
 *
 * Prose around JSON is rejected, not tolerated: an answer with commentary
 * means the model is drifting from the format, the commentary often carries
 * caveats ("I could not find the button, so I guessed…") that extraction would
 * silently drop, and picking "the" JSON out of prose is ambiguous when there
 * are several. One re-ask is cheaper than executing a guess. A single markdown
 * code fence wrapping the whole answer is accepted: it is unambiguous and
 * carries no prose.
 */

export type PlanKind = 'read_only' | 'reversible' | 'handoff' | 'done';

export interface AcceptedPlan {
  kind: PlanKind;
  steps: Step[];
  /** The site-pack action the plan hands to the guarded write path. */
  sitePackAction?: string;
  /** Parameters the model gave for the handed-off action (bill number, amount…), as data. */
  params?: Record<string, string>;
}

export type Verdict = { ok: true; plan: AcceptedPlan } | { ok: false; reason: string };

export type PlanPolicy = 'task' | 'visual_read_only';

export interface ValidationContext {
  pack: SitePack;
  writeWords: readonly string[];
  policy: PlanPolicy;
  /** `[]` means "goal reached"; only meaningful after a plan has run. */
  allowDone: boolean;
  /** Fingerprints of plans already executed in this task, newest last. */
  executedPlans?: readonly string[];
}

/** Answer shape with a site-pack hand-off: this is the planner's plan-file format, not the shared Step schema. */
const HandoffAnswer = z
  .object({
    sitePackAction: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'sitePackAction names a site-pack action (lower_snake_case)'),
    params: z.record(z.string(), z.string().max(200)).optional(),
    steps: z.array(z.unknown()).max(MAX_PLAN_STEPS * 2),
  })
  .strict();

const SESSION_WORDS = ['退出', '注销', '登出', 'logout', 'log out', 'sign out'];
const PAGINATION = /^(下一页|上一页|首页|末页|尾页|第\s*\d+\s*页|\d{1,4}|next|prev|previous|first|last|»|«|>|<)$/i;
/** Selector syntax hiding in a text field or in an invented key. */
const SELECTOR_LIKE = /^\s*(css|xpath|id|text)\s*=|^\s*[.#][A-Za-z_-]|^\s*\/\/|\[[^\]]*=|>>|:nth-|:has\(|::/i;
const SELECTOR_KEYS = new Set(['selector', 'css', 'xpath', 'locator', 'class', 'className', 'id', 'query']);

function snippet(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Finds where the first JSON value starting at `start` ends (bracket matching that respects strings). */
function endOfJsonValue(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') depth++;
    else if (ch === ']' || ch === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** Strict JSON extraction: the answer is one JSON value, optionally wrapped in one code fence, nothing else. */
export function extractJson(answer: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text = answer.trim();
  const fenced = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?\s*```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  if (text === '') return { ok: false, reason: 'the answer was empty; answer with the JSON array of steps' };
  const start = text.search(/[[{]/);
  if (start < 0) {
    return { ok: false, reason: `the answer contains no JSON array ("${snippet(text)}"); answer with only the JSON array of steps` };
  }
  const end = endOfJsonValue(text, start);
  const before = text.slice(0, start).trim();
  const after = end === undefined ? '' : text.slice(end).trim();
  if (before || after) {
    const where = [before && `before it ("${snippet(before)}")`, after && `after it ("${snippet(after)}")`].filter(Boolean).join(' and ');
    return {
      ok: false,
      reason: `the answer had prose around the JSON, ${where}; answer with only the JSON array, no explanation and no text outside it`,
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: `the answer is not valid JSON (${(error as Error).message}); answer with a well-formed JSON array` };
  }
}

/** A stable fingerprint of a step sequence, ignoring notes, for loop detection. */
export function fingerprint(steps: readonly unknown[]): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([key]) => key !== 'note')
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, canonical(v)]),
      );
    }
    return value;
  };
  return JSON.stringify(steps.map(canonical));
}

/**
 * A plan loops when a block of steps is immediately repeated (A B A B), or one
 * step is repeated three times in a row (clicking 下一页 twice is plausible,
 * three identical clicks are a model stuck in place).
 */
export function findLoop(steps: readonly unknown[]): string | undefined {
  const keys = steps.map((s) => fingerprint([s]));
  for (let size = 1; size <= Math.floor(keys.length / 2); size++) {
    const minRepeats = size === 1 ? 3 : 2;
    for (let start = 0; start + size * minRepeats <= keys.length; start++) {
      let repeats = 1;
      while (
        start + size * (repeats + 1) <= keys.length &&
        keys.slice(start, start + size).every((k, i) => k === keys[start + size * repeats + i])
      ) {
        repeats++;
      }
      if (repeats >= minRepeats) {
        return `steps ${start + 1}-${start + size} are repeated ${repeats} times in a row; the plan loops. Give each step once`;
      }
    }
  }
  return undefined;
}

export interface WriteTrigger {
  action: string;
  reversibility: Reversibility;
  /** Accessible names whose click starts or commits this action. */
  names: string[];
}

/**
 * What clicks count as a site-pack write: every click in an action's browser
 * steps (the entry button and the commit button), plus the action's display
 * name (the text before " — " in its description, e.g. 退款), so a button that
 * opens the refund flow from a list row is caught too.
 */
export function writeTriggers(pack: SitePack): WriteTrigger[] {
  return Object.entries(pack.actions)
    .filter(([, action]) => action.reversibility !== 'read_only')
    .map(([name, action]) => {
      const names = new Set<string>();
      for (const step of action.tiers.browser?.steps ?? []) {
        if (step.action === 'click' || step.action === 'download') {
          const text = accessibleText(step.target);
          if (text && !text.includes('{{')) names.add(text);
        }
      }
      const display = action.description.split(/\s+[—–-]\s+/)[0]?.trim();
      if (display && display.length <= 12) names.add(display);
      return { action: name, reversibility: action.reversibility, names: [...names] };
    });
}

function accessibleText(target: Locator): string | undefined {
  return target.name ?? target.text ?? target.label ?? target.placeholder;
}

function norm(text: string): string {
  return text.trim().toLowerCase();
}

function matchingTriggers(text: string, triggers: readonly WriteTrigger[]): WriteTrigger[] {
  const t = norm(text);
  return triggers.filter((trigger) =>
    trigger.names.some((n) => {
      const name = norm(n);
      // Money-moving actions match by containment too (提交退款申请 contains 提交退款).
      return t === name || (trigger.reversibility === 'irreversible' && name.length >= 2 && t.includes(name));
    }),
  );
}

/** Steps the visual tier may run: reading, and moving between pages by links or pagination. */
export function isReadOnlyStep(step: Step): boolean {
  switch (step.action) {
    case 'open':
    case 'wait_for':
    case 'expect':
    case 'extract':
    case 'screenshot':
      return true;
    case 'click': {
      const text = accessibleText(step.target) ?? '';
      return step.target.role === 'link' || PAGINATION.test(text.trim());
    }
    default:
      return false;
  }
}

function describeStep(step: Step): string {
  if (step.action === 'open') return `open ${step.url}`;
  if (step.action === 'screenshot') return `screenshot ${step.as}`;
  const t = step.target;
  const where = t.role
    ? `${t.role} "${t.name ?? ''}"`
    : Object.entries(t)
        .map(([k, v]) => `${k} "${String(v)}"`)
        .join(' ');
  return `${step.action} ${where}`;
}

export { describeStep };

function preflightStep(raw: unknown, index: number): string | undefined {
  const n = index + 1;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return `step ${n} is not a JSON object`;
  const step = raw as Record<string, unknown>;
  const action = step['action'];
  if (typeof action !== 'string' || !(ACTION_NAMES as readonly string[]).includes(action)) {
    return `step ${n} uses action ${JSON.stringify(action ?? null)}, which is not allowed; the only actions are ${ACTION_NAMES.join(', ')}`;
  }
  for (const key of Object.keys(step)) {
    if (SELECTOR_KEYS.has(key)) {
      return `step ${n} has a "${key}" field; selectors are not allowed. Use "target" with one of role+name, label, placeholder, text, testId, field`;
    }
  }
  const inspect: Array<[string, unknown]> = [];
  for (const key of ['target', 'within'] as const) {
    const value = step[key];
    if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (SELECTOR_KEYS.has(k)) {
          return `step ${n} ${key}.${k} is a selector; use one of role+name, label, placeholder, text, testId, field`;
        }
        inspect.push([`${key}.${k}`, v]);
      }
    } else if (typeof value === 'string') {
      inspect.push([key, value]);
    }
  }
  // Seed-style answers put the selector in "value" of a click; fill/select values are data and stay unchecked.
  if (action !== 'fill' && action !== 'select') inspect.push(['value', step['value']]);
  for (const [where, value] of inspect) {
    if (typeof value === 'string' && SELECTOR_LIKE.test(value)) {
      return (
        `step ${n} ${where} is a selector string ("${snippet(value, 40)}"), not a semantic locator; CSS class and id selectors ` +
        `break on the next vendor build. Use role+name, label, placeholder, text, testId or field from the page description`
      );
    }
  }
  return undefined;
}

function zodReason(error: z.ZodError, steps: readonly unknown[]): string {
  const issue = error.issues[0]!;
  const [first, ...rest] = issue.path;
  if (typeof first === 'number') {
    const action = (steps[first] as { action?: string } | undefined)?.action ?? '?';
    const field = rest.map(String).join('.');
    return `step ${first + 1} (${action})${field ? ` ${field}` : ''}: ${issue.message}`;
  }
  return issue.message;
}

/** Validates one parsed answer against the whole rule set. */
export function validateAnswer(value: unknown, ctx: ValidationContext): Verdict {
  let rawSteps: unknown[];
  let sitePackAction: string | undefined;
  let params: Record<string, string> | undefined;
  if (Array.isArray(value)) {
    rawSteps = value;
  } else if (value && typeof value === 'object' && 'sitePackAction' in value) {
    const parsed = HandoffAnswer.safeParse(value);
    if (!parsed.success) {
      return {
        ok: false,
        reason: `the hand-off object is invalid: ${parsed.error.issues[0]!.path.join('.')} ${parsed.error.issues[0]!.message}`,
      };
    }
    rawSteps = parsed.data.steps;
    sitePackAction = parsed.data.sitePackAction;
    params = parsed.data.params;
  } else {
    return {
      ok: false,
      reason:
        'the answer must be a JSON array of step objects (or {"sitePackAction": "...", "steps": [...]} to hand a site-pack write over)',
    };
  }

  if (ctx.policy === 'visual_read_only' && sitePackAction !== undefined) {
    return { ok: false, reason: 'a read-only extraction cannot hand over a write; answer with read-only steps only' };
  }
  if (rawSteps.length === 0 && sitePackAction === undefined) {
    if (ctx.allowDone) return { ok: true, plan: { kind: 'done', steps: [] } };
    return { ok: false, reason: 'the plan is empty; give at least one step towards the goal' };
  }
  if (rawSteps.length > MAX_PLAN_STEPS) {
    return {
      ok: false,
      reason: `the plan has ${rawSteps.length} steps; at most ${MAX_PLAN_STEPS} are allowed. Plan the first ${MAX_PLAN_STEPS} and stop`,
    };
  }
  for (const [index, raw] of rawSteps.entries()) {
    const problem = preflightStep(raw, index);
    if (problem) return { ok: false, reason: problem };
  }
  let steps: Step[] = [];
  if (rawSteps.length > 0) {
    const parsed = Plan.safeParse(rawSteps);
    if (!parsed.success) return { ok: false, reason: zodReason(parsed.error, rawSteps) };
    steps = parsed.data;
  }

  const rowScoped = steps.findIndex((s) => 'within' in s && s.within?.row);
  if (rowScoped >= 0) {
    return {
      ok: false,
      reason:
        `step ${rowScoped + 1} uses within {"row": true}, which needs an item key only ` +
        `site-pack actions receive; locate the element by role+name, text or label instead`,
    };
  }

  const loop = findLoop(steps);
  if (loop) return { ok: false, reason: loop };
  if (ctx.executedPlans && steps.length > 0) {
    const print = fingerprint(steps);
    const times = ctx.executedPlans.filter((p) => p === print).length;
    if (times >= 1 && ctx.executedPlans.at(-1) === print) {
      return {
        ok: false,
        reason:
          'this is the same plan that was just executed; the task would loop. Plan what is still missing, or answer [] if the goal is reached',
      };
    }
    if (times >= 2) return { ok: false, reason: 'this plan has already been executed twice in this task; the task is looping' };
  }

  for (const [index, step] of steps.entries()) {
    if (step.action === 'open') {
      const path = step.url.split(/[?#]/)[0]!.toLowerCase();
      if (/log-?out|sign-?out|logoff/.test(path) || ctx.pack.sessionLost.urlContains.some((f) => path.includes(f.toLowerCase()))) {
        return { ok: false, reason: `step ${index + 1} opens ${step.url}, a login/logout page; sessions are managed outside the plan` };
      }
    }
    if (
      (step.action === 'click' || step.action === 'download') &&
      SESSION_WORDS.some((w) => norm(accessibleText(step.target) ?? '').includes(w))
    ) {
      return {
        ok: false,
        reason: `step ${index + 1} would end the vendor session (${describeStep(step)}); sessions are managed outside the plan`,
      };
    }
  }

  if (ctx.policy === 'visual_read_only') {
    const bad = steps.findIndex((s) => !isReadOnlyStep(s));
    if (bad >= 0) {
      return {
        ok: false,
        reason:
          `step ${bad + 1} (${describeStep(steps[bad]!)}) is not read-only; a visual extraction ` +
          `may only open, wait_for, expect, extract, screenshot and click links or pagination`,
      };
    }
    return { ok: true, plan: { kind: 'read_only', steps } };
  }

  const triggers = writeTriggers(ctx.pack);
  const writes: Array<{ index: number; step: Step; matched: WriteTrigger[] }> = [];
  for (const [index, step] of steps.entries()) {
    if (step.action !== 'click' && step.action !== 'download') continue;
    const text = accessibleText(step.target);
    if (!text) continue;
    const matched = matchingTriggers(text, triggers);
    if (matched.length > 0) {
      writes.push({ index, step, matched });
    } else if (ctx.writeWords.some((w) => norm(text).includes(norm(w)))) {
      return {
        ok: false,
        reason:
          `step ${index + 1} (${describeStep(step)}) looks like a vendor write that no site-pack action describes; ` +
          `the planner does not perform writes. Leave it out; a person must add such an action to the site pack`,
      };
    }
  }

  if (sitePackAction !== undefined) {
    const action = ctx.pack.actions[sitePackAction];
    if (!action) {
      return {
        ok: false,
        reason:
          `sitePackAction "${sitePackAction}" is not an action of site pack ` +
          `"${ctx.pack.site}"; known actions: ${Object.keys(ctx.pack.actions).join(', ')}`,
      };
    }
    const foreign = writes.find((w) => !w.matched.some((m) => m.action === sitePackAction));
    if (foreign) {
      return {
        ok: false,
        reason:
          `step ${foreign.index + 1} (${describeStep(foreign.step)}) belongs to ` +
          `${foreign.matched.map((m) => `"${m.action}"`).join(' / ')}, not to the named sitePackAction "${sitePackAction}"`,
      };
    }
    return { ok: true, plan: { kind: 'handoff', steps, sitePackAction, ...(params ? { params } : {}) } };
  }

  const write = writes[0];
  if (write) {
    const irreversible = write.matched.find((m) => m.reversibility === 'irreversible');
    const trigger = irreversible ?? write.matched[0]!;
    const why = irreversible
      ? `a step of the irreversible site-pack action "${trigger.action}"; the planner never performs irreversible steps itself`
      : `a step of the site-pack write "${trigger.action}"; vendor writes go through the guarded write path`;
    return {
      ok: false,
      reason:
        `step ${write.index + 1} (${describeStep(write.step)}) is ${why}. Leave it out, ` +
        `or answer {"sitePackAction": "${trigger.action}", "steps": [...]} to hand it over`,
    };
  }

  const kind: PlanKind = steps.every((s) => isReadOnlyStep(s) || s.action === 'download') ? 'read_only' : 'reversible';
  return { ok: true, plan: { kind, steps } };
}

/** Parses and validates a raw model answer. */
export function judgeAnswer(answer: string, ctx: ValidationContext): Verdict {
  const json = extractJson(answer);
  if (!json.ok) return json;
  return validateAnswer(json.value, ctx);
}
