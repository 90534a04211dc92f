import { ACTION_NAMES, MAX_PLAN_STEPS, type Step } from '../src/sitepack/action-language.js';
import type { SitePack } from '../src/sitepack/schema.js';
import type { PageDescription } from './page-description.js';
import type { PlanPolicy } from './plan-validation.js';
import { describeStep } from './plan-validation.js';

/**
 * The prompts. The system prompt is the contract (grammar, rules, the site's
 * writes); the user message carries only what changes per call: the goal, the
 * compressed history, the failure being recovered from, and the page.
 */

const STEP_GRAMMAR = `Step shapes (one JSON object per step):
{"action":"open","url":"/path?query"}  (a path on this site, never a full URL)
{"action":"click","target":LOCATOR}  (optional: "within":SCOPE, "opensPage":true for links opening a new tab)
{"action":"fill","target":LOCATOR,"value":"text"}
{"action":"select","target":LOCATOR,"value":"option label"}
{"action":"wait_for","target":LOCATOR,"state":"visible"}  (or "hidden")
{"action":"expect","target":LOCATOR,"state":"visible"}
{"action":"extract","target":LOCATOR,"as":"snake_case_name","mode":"table"}  (mode "table" for tables, "text" otherwise)
{"action":"download","target":LOCATOR,"as":"file-name.csv"}  (clicks the target and keeps the file)
{"action":"screenshot","as":"name"}
LOCATOR is exactly one of:
  {"role":"button","name":"查询"}  role is an ARIA role from the page description (button, link, textbox, combobox, checkbox, tab, table, row, cell, dialog, heading…)
  {"label":"状态"}  {"placeholder":"请输入单号"}  {"text":"visible text"}  {"testId":"test-id"}  {"field":"data_field_name"}
SCOPE is {"dialog":true} (inside the open dialog) or {"frameTitle":"title of the iframe"}.
A click that raises a native confirm/alert needs "dialog":{"accept":false,"messageContains":"text of the dialog"}; dialogs are dismissed unless a step expects them.`;

export function systemPrompt(pack: SitePack, policy: PlanPolicy): string {
  const writes = Object.entries(pack.actions)
    .filter(([, a]) => a.reversibility !== 'read_only')
    .map(([name, a]) => `- ${name} (${a.reversibility}): ${a.description}`)
    .join('\n');
  const common = `You plan browser steps on "${pack.site}", a vendor back office (${pack.description}).
The user is already logged in; never log in or out.

Answer with a JSON array of at most ${MAX_PLAN_STEPS} steps and nothing else: no prose, no explanation, no code fences.
Allowed actions: ${ACTION_NAMES.join(', ')}. Nothing else exists (no eval, no script, no navigation by URL outside "open").

${STEP_GRAMMAR}

Rules:
- Locate elements semantically, by role+name, label, placeholder, text, testId or field, using names that appear in the page description.
- Never use CSS, XPath, class or id selectors ("css=…", ".btn-primary", "#export", "//div"), and never a "selector" field.
- Give each step once; do not repeat step sequences.`;
  if (policy === 'visual_read_only') {
    return `${common}
- This is a READ-ONLY extraction on a page whose usual structure is missing. Use only open, wait_for, expect, extract and screenshot, and click only links or pagination (下一页, page numbers). Never fill, select, download, or click buttons.
- Extract what the goal asks for (mode "table" for tabular data). Do not judge or conclude anything; only read.`;
  }
  return `${common}
- These site-pack actions write vendor data and are performed only by the guarded write path, never by you:
${writes || '- (none)'}
  Never click their buttons. If the goal needs one of them, answer {"sitePackAction":"<name>","params":{…},"steps":[…]} instead of a bare array; it is handed over, not executed by you.
- When you are told that the previous plan finished, answer [] if the goal is reached, otherwise the next steps.`;
}

export interface HistoryView {
  /** Compressed history text (summaries, then the most recent steps verbatim). */
  text: string;
}

export interface UserPromptInput {
  instruction: string;
  tenant?: string;
  page: PageDescription;
  history?: HistoryView;
  failure?: { step: Step; reason: string; consecutive: number };
  continuation?: boolean;
}

export function userPrompt(input: UserPromptInput): string {
  const parts = [`Goal: ${input.instruction}`];
  if (input.tenant) parts.push(`Tenant: ${input.tenant}`);
  if (input.history?.text) parts.push(`Done so far (oldest first):\n${input.history.text}`);
  if (input.failure) {
    parts.push(
      `The last step failed: ${describeStep(input.failure.step)} — ${input.failure.reason}\n` +
        `The page has been read again (below). Plan the remaining work from this page; do not repeat the failed step unchanged.`,
    );
  } else if (input.continuation) {
    parts.push('The previous plan finished. If the goal is reached answer []; otherwise give the next steps.');
  }
  parts.push(`Current page:\n${input.page.text}`);
  return parts.join('\n\n');
}

/** Sent after a rejected answer; the reason is what the model needs to correct. */
export function reaskPrompt(reason: string): string {
  return `Your answer was rejected: ${reason}.\nAnswer again with only the JSON array of steps (or the sitePackAction object), nothing else.`;
}
