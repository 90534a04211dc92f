import { z } from 'zod';
import { NamedError } from '../domain/errors.js';

/**
 * The whitelisted action language (BRIEF section 6, seed 003): site-pack
 * actions and LLM-drafted plans are both validated by these schemas, so a
 * reviewed plan can be promoted into a site pack unchanged.
 *
 * Locators are semantic only. There is deliberately no CSS/XPath locator: a
 * generated class name breaks on the next vendor build, and a selector string
 * is where an injected bill number would become code. Values such as bill
 * numbers travel as data: `{{param}}` placeholders are filled in after
 * validation and only ever reach Playwright as accessible names, texts or
 * attribute values compared in JavaScript, never as selector syntax.
 */

export const ACTION_NAMES = ['open', 'click', 'fill', 'select', 'wait_for', 'extract', 'download', 'screenshot', 'expect'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

const ARIA_ROLES = [
  'button',
  'link',
  'textbox',
  'combobox',
  'checkbox',
  'radio',
  'row',
  'cell',
  'columnheader',
  'table',
  'dialog',
  'alertdialog',
  'alert',
  'status',
  'heading',
  'navigation',
  'tab',
  'tabpanel',
  'menuitem',
  'option',
  'listitem',
  'list',
  'form',
  'region',
  'img',
  'main',
  'banner',
  'grid',
  'gridcell',
  'rowheader',
  'rowgroup',
  'treegrid',
  'menu',
  'menubar',
  'menuitemcheckbox',
  'menuitemradio',
  'listbox',
  'article',
  'group',
  'searchbox',
  'spinbutton',
  'switch',
  'term',
  'definition',
  'paragraph',
  'complementary',
  'contentinfo',
  'search',
  'progressbar',
  'log',
  'tooltip',
] as const;

/** Text given to a locator: literal, or a `{{param}}` template filled in as data. */
const LocatorText = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

const SELECTOR_SYNTAX = /^(css|xpath|id|xpath)=|^[.#/]|\[.*=.*\]|>>|::|:nth|:has|\/\//i;

/** Rejects strings that are really selectors smuggled into a text field. */
const SemanticText = LocatorText.refine((value) => !SELECTOR_SYNTAX.test(value), {
  message: 'looks like a CSS/XPath selector; use role+name, label, placeholder, text or test id instead',
});

const BaseLocator = z
  .object({
    role: z.enum(ARIA_ROLES).optional(),
    name: SemanticText.optional(),
    label: SemanticText.optional(),
    placeholder: SemanticText.optional(),
    text: SemanticText.optional(),
    testId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'test ids are letters, digits, _ and -')
      .optional(),
    exact: z.boolean().optional(),
  })
  .strict();

function countStrategies(l: z.infer<typeof BaseLocator>): number {
  return [l.role, l.label, l.placeholder, l.text, l.testId].filter((v) => v !== undefined).length;
}

export const Locator = BaseLocator.superRefine((l, ctx) => {
  const n = countStrategies(l);
  if (n !== 1) {
    ctx.addIssue({
      code: 'custom',
      message:
        n === 0
          ? 'a locator needs exactly one of role, label, placeholder, text, testId'
          : 'a locator uses exactly one of role, label, placeholder, text, testId (name/exact qualify role/text)',
    });
  }
  if (l.name !== undefined && l.role === undefined) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: 'name only qualifies a role locator' });
  }
});
export type Locator = z.infer<typeof Locator>;

/**
 * A frame of the page (an <iframe>, at any depth): by its name attribute, by its title attribute, or by a
 * regular expression over its URL (path, query and hash), e.g. `{ title: 工作区 }` or `{ url: '^/work/list' }`.
 * Compared as data in the page's frame tree, never turned into a selector.
 */
export const FrameSelector = z
  .object({
    name: LocatorText.optional(),
    title: LocatorText.optional(),
    url: z
      .string()
      .min(1)
      .max(300)
      .refine((pattern) => isRegExp(pattern), 'frame.url is a regular expression over the frame URL path (JavaScript syntax)')
      .optional(),
  })
  .strict()
  .refine((f) => [f.name, f.title, f.url].filter((v) => v !== undefined).length === 1, {
    message: 'a frame is found by exactly one of name, title or url, e.g. frame: { title: 工作区 }',
  });
export type FrameSelector = z.infer<typeof FrameSelector>;

/** A frame as an engineer reads it in an error message: `the frame titled "工作区"`. */
export function describeFrame(frame: FrameSelector): string {
  if (frame.name !== undefined) return `the frame named ${JSON.stringify(frame.name)}`;
  if (frame.title !== undefined) return `the frame titled ${JSON.stringify(frame.title)}`;
  return `the frame at /${frame.url ?? ''}/`;
}

/**
 * Where a locator is searched: the page, the current item's row (found through
 * the list's row and key definition, the key compared as data), a dialog, a
 * menu, a frame found by its title, or a modal without any ARIA role found by
 * a text it shows (its title, usually).
 */
export const Scope = z
  .object({
    row: z.literal(true).optional(),
    /** `true`: the open dialog or alertdialog; or one by role and/or accessible name. */
    dialog: z
      .union([z.literal(true), z.object({ role: z.enum(['dialog', 'alertdialog']).optional(), name: SemanticText.optional() }).strict()])
      .optional(),
    /** A modal drawn without a dialog role: the overlay around the element showing this text. */
    modal: z.object({ text: SemanticText, exact: z.boolean().optional() }).strict().optional(),
    /** The open menu (a row's "…" / 更多 menu, usually rendered at the end of the page). */
    menu: z.literal(true).optional(),
    frameTitle: SemanticText.optional(),
    /** A frame by name, title or URL (the step's target is searched inside it). */
    frame: FrameSelector.optional(),
    /** The top page, for a step of a frame-scoped list, detail or action that acts outside the frame (the portal's menu). */
    top: z.literal(true).optional(),
  })
  .strict()
  .refine((scope) => Object.keys(scope).length <= 1, 'a scope names one of row, dialog, modal, menu, frameTitle, frame, top');
export type Scope = z.infer<typeof Scope>;

const Target = z
  .object({
    target: Locator,
    within: Scope.optional(),
  })
  .strict();

/** A native dialog (alert/confirm/prompt) the step expects and may accept. */
const ExpectedDialog = z
  .object({
    accept: z.boolean(),
    messageContains: LocatorText,
  })
  .strict();

const RelativeUrl = z
  .string()
  .min(1)
  .max(500)
  .refine((u) => u.startsWith('/') && !u.startsWith('//'), {
    message: 'must be a path on the site (starting with a single /); the base URL comes from config',
  });

const Note = z.string().max(200).optional();

/** What `wait_for` and `expect` take: a target, the state it should reach (visible by default) and how long to wait. */
const TargetInState = {
  ...Target.shape,
  state: z.enum(['visible', 'hidden']).default('visible'),
  timeoutMs: z.number().int().min(100).max(60_000).optional(),
  note: Note,
};

export const Step = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('open'),
      url: RelativeUrl,
      /** Single-page apps: the step is done once this shows (load events say nothing there). */
      waitFor: Locator.optional(),
      note: Note,
    })
    .strict(),
  z
    .object({
      action: z.literal('click'),
      ...Target.shape,
      dialog: ExpectedDialog.optional(),
      opensPage: z.boolean().optional(),
      /** The click that changes vendor state; the claim moves to WRITING just before it. */
      commit: z.boolean().optional(),
      note: Note,
    })
    .strict(),
  z
    .object({
      action: z.literal('fill'),
      ...Target.shape,
      value: z.string().max(500),
      /** Typed outside tracing, so the trace never holds it. */
      secret: z.boolean().optional(),
      note: Note,
    })
    .strict(),
  z.object({ action: z.literal('select'), ...Target.shape, value: z.string().max(200), note: Note }).strict(),
  z.object({ action: z.literal('wait_for'), ...TargetInState }).strict(),
  z
    .object({
      action: z.literal('extract'),
      ...Target.shape,
      as: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'extract names are lower_snake_case'),
      /** table: rows of cells; text: the element's text. */
      mode: z.enum(['text', 'table']).default('text'),
      /**
       * Text mode: keep only what this regular expression captures (group 1, or the
       * whole match). The value can then fill later steps as {{as}}, e.g. the amount
       * a confirmation asks to be typed.
       */
      pattern: z.string().max(200).refine(isRegExp, 'must be a valid regular expression').optional(),
      note: Note,
    })
    .strict(),
  z
    .object({
      action: z.literal('download'),
      ...Target.shape,
      as: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,80}$/, 'download names are lower-case file names'),
      note: Note,
    })
    .strict(),
  z.object({ action: z.literal('screenshot'), as: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/), note: Note }).strict(),
  z.object({ action: z.literal('expect'), ...TargetInState }).strict(),
]);
export type Step = z.infer<typeof Step>;

export function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

export const MAX_PLAN_STEPS = 10;

/** A plan drafted for one instruction: the same steps, at most ten. */
export const Plan = z.array(Step).min(1, 'a plan has at least one step').max(MAX_PLAN_STEPS, `a plan has at most ${MAX_PLAN_STEPS} steps`);
export type Plan = z.infer<typeof Plan>;

const PLACEHOLDER = /\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g;

/** Names of the `{{param}}` placeholders a string uses. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

/**
 * Fills `{{param}}` placeholders with values as plain data. URL paths encode
 * each value as a path segment / query value, so a value can never change the
 * path's shape.
 */
export function fillTemplate(text: string, params: Readonly<Record<string, string>>, mode: 'text' | 'url' = 'text'): string {
  return text.replace(PLACEHOLDER, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new MissingParameterError(name);
    return mode === 'url' ? encodeURIComponent(value) : value;
  });
}

/**
 * Fills the placeholders whose value is known and leaves the rest as written: for messages, so an error about
 * `expect text="金额 ¥{{amount}}"` shows the value the step looked for, and a missing value still shows its name.
 */
export function fillKnown(text: string, params: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => params[name] ?? whole);
}

export class MissingParameterError extends NamedError {
  override name = 'MissingParameterError';
  constructor(readonly parameter: string) {
    super(`step uses {{${parameter}}} but no value named "${parameter}" was given`);
  }
}

/** A locator as an engineer reads it in an error message: `role=button name="退款"`. */
export function describeLocator(locator: Locator): string {
  const exact = locator.exact ? ' exact' : '';
  if (locator.role) return `role=${locator.role}${locator.name === undefined ? '' : ` name=${JSON.stringify(locator.name)}`}${exact}`;
  if (locator.label !== undefined) return `label=${JSON.stringify(locator.label)}${exact}`;
  if (locator.placeholder !== undefined) return `placeholder=${JSON.stringify(locator.placeholder)}${exact}`;
  if (locator.text !== undefined) return `text=${JSON.stringify(locator.text)}${exact}`;
  return `testId=${JSON.stringify(locator.testId)}`;
}

/** A scope as an engineer reads it in an error message. */
export function describeScope(scope: Scope | undefined): string {
  if (!scope) return '';
  if (scope.row) return ' within the item row';
  if (scope.dialog === true) return ' within the open dialog';
  if (scope.dialog)
    return ` within the ${scope.dialog.role ?? 'dialog'}${scope.dialog.name ? ` ${JSON.stringify(scope.dialog.name)}` : ''}`;
  if (scope.modal) return ` within the modal showing ${JSON.stringify(scope.modal.text)}`;
  if (scope.menu) return ' within the open menu';
  if (scope.frameTitle) return ` within the frame ${JSON.stringify(scope.frameTitle)}`;
  if (scope.frame) return ` within ${describeFrame(scope.frame)}`;
  if (scope.top) return ' on the top page';
  return '';
}
