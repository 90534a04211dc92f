import { readFile } from 'node:fs/promises';
import { stripVTControlCharacters } from 'node:util';
import type { Dialog, Locator as PwLocator, Page } from 'playwright-core';
import { describeLocator, describeScope, fillKnown, fillTemplate, type FrameSelector, type Step } from '../sitepack/action-language.js';
import { waitOutPageRateLimit } from './rate-limits.js';
import type { SitePack } from '../sitepack/schema.js';
import { ReadFailedError, SessionLostError, StructuredContractMissingError } from '../domain/errors.js';
import { isRowOfRedrawingGrid, resolveLocator, scopeRoot, settleGridTarget, where, type RowBinding } from './locate.js';
import { evaluateQuietly } from './quiet-page.js';
import { isPage, resolveFrame, type Surface } from './frames.js';
import { deadline } from '../lib/deadline.js';

/**
 * Runs whitelisted steps on a page. It decides nothing about the business: it
 * makes each step reliable (waiting, frames, new tabs, native dialogs) and
 * reports what it saw. Native dialogs are dismissed unless the step expects
 * exactly that dialog, so nothing is confirmed by accident.
 */

/** The session-loss signals of a pack (the login flow itself uses texts only). */
export type SessionSignals = Pick<SitePack['sessionLost'], 'texts'> & Partial<SitePack['sessionLost']>;

export interface StepContext {
  baseUrl: string;
  params: Readonly<Record<string, string>>;
  /** The item the `row` scope refers to. */
  row?: RowBinding;
  sessionLost: SessionSignals;
  /** True while Playwright tracing records this context: secret fills are refused then. */
  traced: boolean;
  timeoutMs?: number;
  /**
   * The frame the steps act in (a pack's list.frame, detail.frame, export.frame or an action's frame): every step
   * but `open`, which loads the top page, is scoped to it (an open's waitFor too); `within: { top: true }` leaves it.
   */
  frame?: FrameSelector;
}

export interface DialogRecord {
  type: string;
  message: string;
  accepted: boolean;
  expected: boolean;
}

export interface StepResult {
  /** The page to continue on (a step may open a new tab). */
  page: Page;
  extracted?: { as: string; value: string | string[][] };
  download?: { as: string; suggestedName: string; body: Buffer };
  screenshot?: { as: string; body: Buffer };
}

interface DialogPolicy {
  expected?: { accept: boolean; messageContains: string };
  seen: DialogRecord[];
  /** Statuses of the page's own fetch/XHR calls to its site since the last reset. */
  apiStatuses: Array<{ status: number; url: string }>;
}

const policies = new WeakMap<Page, DialogPolicy>();

/**
 * Watches a page (once): native dialogs are dismissed unless a step expects
 * exactly that dialog, and the answers to the page's own fetch/XHR calls are
 * recorded so a 401 the app swallows still counts as a lost session.
 */
export function dialogPolicy(page: Page): DialogPolicy {
  let policy = policies.get(page);
  if (!policy) {
    const created: DialogPolicy = { seen: [], apiStatuses: [] };
    page.on('dialog', (dialog: Dialog) => {
      const expected = created.expected;
      const matches = expected !== undefined && dialog.message().includes(expected.messageContains);
      const accept = matches && expected.accept;
      created.seen.push({ type: dialog.type(), message: dialog.message(), accepted: accept, expected: matches });
      if (matches) created.expected = undefined;
      void (accept ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    });
    page.on('response', (response) => {
      const type = response.request().resourceType();
      if ((type === 'fetch' || type === 'xhr') && response.status() >= 400) {
        created.apiStatuses.push({ status: response.status(), url: response.url() });
      }
    });
    policies.set(page, created);
    policy = created;
  }
  return policy;
}

/**
 * Raises SessionLostError when the page shows any configured sign of a lost
 * session: a login URL (path, query or hash), a login form, a 401/403 answer to
 * the page's own calls, a text on the page or in a native alert.
 */
export async function assertSessionAlive(page: Page, signals: SessionSignals): Promise<void> {
  const url = page.url();
  const here = where(page);
  const onLoginPage = (signals.urlContains ?? []).find((fragment) => here.includes(fragment));
  if (onLoginPage) throw new SessionLostError(`the vendor sent us to ${here}: the session is gone`, { url });
  // A portal's work area (an iframe of the same site) is sent to the login page while the top page stays.
  const frames = page.frames().filter((frame) => frame !== page.mainFrame() && sameOrigin(frame.url(), url));
  for (const frame of frames) {
    const there = where(frame);
    if ((signals.urlContains ?? []).some((fragment) => there.includes(fragment))) {
      throw new SessionLostError(`the vendor sent the frame ${frame.name() ? `"${frame.name()}" ` : ''}to ${there}: the session is gone`, {
        url: frame.url(),
      });
    }
  }
  const policy = policies.get(page);
  const refused = policy?.apiStatuses.find((answer) => (signals.httpStatus ?? []).includes(answer.status as 401));
  if (refused) {
    throw new SessionLostError(`the page's own call to ${new URL(refused.url).pathname} answered ${refused.status}: the session is gone`, {
      url,
      status: refused.status,
    });
  }
  const alerted = policy?.seen.find((dialog) => signals.texts.some((text) => dialog.message.includes(text)));
  if (alerted) throw new SessionLostError(`the vendor says "${alerted.message}" (native ${alerted.type})`, { url });
  const { loginForm } = signals;
  if (loginForm) {
    const showsLoginForm = (surface: Surface): Promise<boolean> =>
      resolveLocator(surface, loginForm, {})
        .first()
        .isVisible()
        .catch(() => false);
    if (await showsLoginForm(page)) {
      throw new SessionLostError(`the login form (${describeLocator(loginForm)}) shows again on ${here}: the session is gone`, { url });
    }
    for (const frame of frames) {
      if (await showsLoginForm(frame)) {
        throw new SessionLostError(
          `the login form (${describeLocator(loginForm)}) shows again in the frame at ${where(frame)}: the session is gone`,
          { url: frame.url() },
        );
      }
    }
  }
  const text = await firstVisibleText(page, signals.texts);
  if (text !== undefined) throw new SessionLostError(`the vendor says "${text}"`, { url, text });
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/**
 * The first of `texts` visible on the page or in the frame, if any. On a page, one round trip when none is (the
 * usual case), since this runs after every navigation; in a frame (a portal's work area) the texts are tried one by
 * one, since the quiet check reads the top document only.
 */
export async function firstVisibleText(surface: Surface, texts: readonly string[]): Promise<string | undefined> {
  if (isPage(surface) && !(await mayShowAny(surface, texts))) return undefined;
  for (const text of texts) {
    if (
      await surface
        .getByText(text)
        .first()
        .isVisible()
        .catch(() => false)
    )
      return text;
  }
  return undefined;
}

/** False when none of the texts can be visible on the page: quietly first, then with one locator for them all. */
async function mayShowAny(page: Page, texts: readonly string[]): Promise<boolean> {
  const [first, ...rest] = texts;
  if (first === undefined) return false;
  // Text matching through locators walks every element twice; a page whose text contains none of them needs no walk.
  if (!(await evaluateQuietly(page, `(${containsAnyText.toString()})(${JSON.stringify(texts)})`).catch(() => true))) return false;
  const any = rest.reduce((either, text) => either.or(page.getByText(text)), page.getByText(first));
  return any
    .first()
    .isVisible()
    .catch(() => false);
}

/**
 * Whether any of the texts occurs in the text of the document's body (open shadow roots and input values
 * included; scripts and styles not, as Playwright's text matching skips them), compared loosely:
 * case-insensitive, whitespace ignored. A quick "no": text in a hidden element still says "maybe", and the
 * locators decide.
 */
const containsAnyText = new Function(
  'texts',
  `const squash = (s) => (s || '').replace(/\\s+/g, '').toLowerCase();
  const skipped = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const parts = [];
  const walk = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!skipped.has(node.parentNode && node.parentNode.nodeName)) parts.push(node.nodeValue);
        continue;
      }
      if (node.shadowRoot) walk(node.shadowRoot);
      if (node.tagName === 'INPUT' || node.tagName === 'TEXTAREA') parts.push(' ' + (node.value || ''));
    }
  };
  if (document.body) walk(document.body);
  const text = squash(parts.join(' '));
  return texts.some((t) => text.includes(squash(t)));`,
) as (texts: string[]) => boolean;

/**
 * A step as an engineer reads it in an error: `click role=button name="确认" within the open dialog`, with the
 * parameters it was run with filled in (`text="金额 ¥1,280.00"`, not `text="金额 ¥{{amount}}"`): the message says
 * what was looked for. A placeholder without a value stays as written.
 */
export function describeStep(raw: Step, params: Readonly<Record<string, string>> = {}): string {
  const step = JSON.parse(JSON.stringify(raw), (_key, value: unknown) =>
    typeof value === 'string' ? fillKnown(value, params) : value,
  ) as Step;
  if (step.action === 'open') return `open ${step.url}`;
  if (step.action === 'screenshot') return `screenshot ${step.as}`;
  return `${step.action} ${describeLocator(step.target)}${describeScope(step.within)}`;
}

/**
 * Runs one step. `commit`, for a step marked `commit: true`, runs once the step's scope and target are found and
 * the target shows, immediately before the click: a step that cannot find its target fails with nothing dispatched
 * and `commit` never run, so the write it belongs to is "not committed" (src/domain/commit-point.ts).
 */
export async function runStep(page: Page, step: Step, ctx: StepContext, commit?: () => Promise<void>): Promise<StepResult> {
  const timeout = ctx.timeoutMs ?? 10_000;
  if (step.action === 'open') {
    const url = new URL(fillTemplate(step.url, ctx.params, 'url'), ctx.baseUrl);
    if (url.origin !== new URL(ctx.baseUrl).origin) throw new Error(`refusing to open ${url.origin}: not the configured site`);
    dialogPolicy(page);
    // Opening the URL already shown (a hash route, say) must still show it afresh: going there again changes nothing.
    const go =
      page.url() === url.toString()
        ? page.reload({ timeout, waitUntil: 'domcontentloaded' })
        : page.goto(url.toString(), { timeout, waitUntil: 'domcontentloaded' });
    const failedOpen = (error: Error) => {
      throw new ReadFailedError(`could not open ${url.pathname}${url.hash}: ${error.message}`, { url: url.toString() }, { cause: error });
    };
    // A rate-limited page (429) is waited out and opened again within the step's time (rate-limits.ts).
    const response = await waitOutPageRateLimit(
      await go.catch(failedOpen),
      () => page.goto(url.toString(), { timeout, waitUntil: 'domcontentloaded' }).catch(failedOpen),
      `${url.pathname}${url.search}`,
      timeout,
    );
    await assertSessionAlive(page, ctx.sessionLost);
    if (response && response.status() >= 500) {
      throw new ReadFailedError(`${url.pathname} answered ${response.status()}`, { status: response.status() });
    }
    if (step.waitFor) {
      // In a frame-scoped section the page opened is the portal, and what shows it is ready is in its frame.
      const limit = deadline(timeout);
      const surface = ctx.frame ? await resolveFrame(page, ctx.frame, timeout) : page;
      await waitOrExplain(
        page,
        resolveLocator(surface, step.waitFor, ctx.params).first(),
        step,
        ctx,
        'visible',
        Math.max(1, limit.remaining()),
      );
    }
    return { page };
  }
  if (step.action === 'screenshot') {
    return { page, screenshot: { as: step.as, body: await page.screenshot({ fullPage: true }) } };
  }

  // A step that acts in the item's row acts on the row it found, never on whatever row later sits at its position.
  const acts = step.action === 'click' || step.action === 'fill' || step.action === 'select' || step.action === 'download';
  const waitsForHidden = (step.action === 'wait_for' || step.action === 'expect') && step.state === 'hidden';
  // One budget per step: finding the scope (a row, a dialog) spends from the time the target then gets.
  const limit = deadline(timeout);
  const root = await scopeRoot(page, step.within, ctx.row, timeout, ctx.params, { pin: acts, present: !waitsForHidden, frame: ctx.frame });
  const left = Math.max(1, limit.remaining());
  const target = resolveLocator(root, step.target, ctx.params).first();
  // Click, fill and select wait for their target themselves; only a failure needs the explanation (actOrExplain).
  if (step.action === 'extract' || step.action === 'download') await waitOrExplain(page, target, step, ctx, 'visible', left);
  const act = <T>(action: () => Promise<T>) => actOrExplain(page, target, step, ctx, action);
  // In a row of a grid that redraws as it scrolls, the target is brought into view and the grid left to redraw
  // first, so the click is not split between two rows (locate.ts).
  if (acts && isRowOfRedrawingGrid(root)) await settleGridTarget(target, left).catch(() => undefined);

  switch (step.action) {
    case 'click': {
      const policy = dialogPolicy(page);
      if (step.dialog) {
        policy.expected = { accept: step.dialog.accept, messageContains: fillTemplate(step.dialog.messageContains, ctx.params) };
      }
      try {
        if (step.commit && commit) {
          await waitOrExplain(page, target, step, ctx, 'visible', left);
          await commit();
        }
        if (step.opensPage) {
          const [opened] = await Promise.all([
            page.context().waitForEvent('page', { timeout: left }),
            act(() => target.click({ timeout: left })),
          ]);
          await opened.waitForLoadState('domcontentloaded');
          dialogPolicy(opened);
          await assertSessionAlive(opened, ctx.sessionLost);
          return { page: opened };
        }
        await act(() => target.click({ timeout: left }));
      } finally {
        policy.expected = undefined;
      }
      await assertSessionAlive(page, ctx.sessionLost);
      return { page };
    }
    case 'fill': {
      if (step.secret && ctx.traced) {
        throw new Error('refusing to type a secret while tracing: the trace would record it');
      }
      await act(() => target.fill(fillTemplate(step.value, ctx.params), { timeout: left }));
      return { page };
    }
    case 'select': {
      await act(() => target.selectOption(fillTemplate(step.value, ctx.params), { timeout: left }));
      return { page };
    }
    case 'wait_for':
    case 'expect': {
      await waitOrExplain(page, target, step, ctx, step.state, step.timeoutMs ?? left);
      await assertSessionAlive(page, ctx.sessionLost);
      return { page };
    }
    case 'extract': {
      if (step.mode === 'table') {
        // Native tables first; grids built from ARIA roles (a redesigned list) the same way.
        const native = await target.locator('tr').count();
        const rows = await target
          .locator(native > 0 ? 'tr' : '[role=row]')
          .evaluateAll(
            (trs, cellSelector) =>
              trs.map((tr) => Array.from(tr.querySelectorAll(cellSelector)).map((cell) => (cell.textContent ?? '').trim())),
            native > 0 ? 'th,td' : '[role=cell],[role=columnheader],[role=gridcell],[role=rowheader]',
          );
        return { page, extracted: { as: step.as, value: rows } };
      }
      const text = ((await target.innerText({ timeout: left })) ?? '').replace(/\s+/g, ' ').trim();
      const match = step.pattern === undefined ? undefined : new RegExp(step.pattern, 'u').exec(text);
      if (step.pattern !== undefined && !match) {
        throw new StructuredContractMissingError(
          `step "${describeStep(step, ctx.params)}" read ${JSON.stringify(text.slice(0, 80))} on ${where(page)}, which does not match /${step.pattern}/`,
          { url: page.url() },
        );
      }
      return { page, extracted: { as: step.as, value: match ? (match[1] ?? match[0]).trim() : text } };
    }
    case 'download': {
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: left }), target.click({ timeout: left })]);
      const path = await download.path();
      return { page, download: { as: step.as, suggestedName: download.suggestedFilename(), body: await readFile(path) } };
    }
  }
}

/**
 * Waits for a step's target to show or to go away (a modal closing once the vendor answered). When it does not, a
 * lost session is reported as such; otherwise the error names the step and the page: a target that never shows
 * means the pack no longer matches the site; one that stays says what still shows, where and for how long, usually
 * a vendor that never answered, which is not a pack mismatch.
 */
async function waitOrExplain(
  page: Page,
  target: PwLocator,
  step: Step,
  ctx: StepContext,
  state: 'visible' | 'hidden',
  timeout: number,
): Promise<void> {
  try {
    await target.waitFor({ state, timeout });
  } catch (error) {
    await assertSessionAlive(page, ctx.sessionLost);
    if (page.isClosed()) throw error;
    if (state === 'visible') throw targetMissing(page, step, ctx);
    throw new Error(`step "${describeStep(step, ctx.params)}": the target still shows on ${where(page)} after ${timeout} ms`);
  }
}

/** The step's target is not on the page: the pack no longer matches the site. */
function targetMissing(page: Page, step: Step, ctx: StepContext): StructuredContractMissingError {
  const described = describeStep(step, ctx.params);
  return new StructuredContractMissingError(`step "${described}" found nothing on ${where(page)}`, { step: described, url: page.url() });
}

/**
 * Runs an action that waits for its own target (Playwright's actionability checks include visibility), which
 * saves a separate wait per step. When it fails on a target that is not there, the failure is explained as
 * waitOrExplain would have: a lost session, or the pack no longer matching the page.
 */
async function actOrExplain<T>(page: Page, target: PwLocator, step: Step, ctx: StepContext, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (page.isClosed()) throw error;
    if (await target.isVisible().catch(() => false)) {
      const blocked = whyNotActionable(error);
      if (blocked === undefined) throw error;
      // The target shows but Playwright could not act on it for the whole budget: covered by another element (a
      // styled select's placeholder over its input), disabled, read-only. A raw timeout would read as a service
      // that did not answer; it is the pack aiming at the wrong element, so it is named as a pack mismatch.
      await assertSessionAlive(page, ctx.sessionLost);
      throw new StructuredContractMissingError(
        `step "${describeStep(step, ctx.params)}" found its target on ${where(page)} but ${blocked}`,
        {
          step: describeStep(step, ctx.params),
          url: page.url(),
        },
      );
    }
    await assertSessionAlive(page, ctx.sessionLost);
    throw targetMissing(page, step, ctx);
  }
}

/** What Playwright's call log says kept it from acting on a visible target, as a clause with the fix. */
const NOT_ACTIONABLE: ReadonlyArray<{ log: RegExp; says: (line: string) => string }> = [
  {
    log: /intercepts pointer events/,
    says: (line) =>
      `another element covers it (${line.replace(/\s+/g, ' ').slice(0, 160)}): ` +
      'aim the step at what shows on top (its text or label), as a person would click it',
  },
  { log: /element is not enabled/, says: () => 'it stayed disabled: a step before it (a required field, a choice) is missing' },
  {
    log: /element is not editable/,
    says: () => 'it is read-only: a styled control takes its value another way (click it, then the option)',
  },
  { log: /element is not stable/, says: () => 'it kept moving (an animation that never ends)' },
  { log: /outside of the viewport/, says: () => 'it stayed outside the viewport' },
];

/**
 * Why an action failed on a target that shows, or undefined when the failure is not about the target (the page
 * closed, the browser died: those stay as they are). Playwright says it in the error's call log.
 */
function whyNotActionable(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = error.message;
  if (/Element is not an <input>|Element is not a <select>/.test(message)) {
    return /<select>/.test(message)
      ? 'it is not a native <select>: a styled dropdown is two clicks (open it, then click the option)'
      : 'it is not a field that can be typed into: aim the step at the input (its label or placeholder)';
  }
  if (error.name !== 'TimeoutError') return undefined;
  const lines = message.split('\n').map((line) => stripVTControlCharacters(line).trim());
  for (const line of [...lines].reverse()) {
    const known = NOT_ACTIONABLE.find((k) => k.log.test(line));
    if (known) return `could not ${describeAction(message)} it: ${known.says(line.replace(/^- /, ''))}`;
  }
  return `could not ${describeAction(message)} it in the step's time (${lines[0] ?? 'timeout'})`;
}

function describeAction(message: string): string {
  const action = /locator\.(\w+)/.exec(message)?.[1];
  return action === 'selectOption' ? 'select in' : (action ?? 'act on');
}

/** What a sequence of steps left: the page to continue on and the values it extracted. */
export interface StepsResult {
  page: Page;
  extracted: Record<string, string>;
  downloads: NonNullable<StepResult['download']>[];
}

/**
 * Runs steps in order. A text a step extracts fills later steps as {{as}} (the
 * amount a confirmation asks to be typed); `before` runs ahead of each step
 * (a picture before the first step that acts); `commit` runs for a commit click
 * once its target is found, just before the click (runStep), to move the claim
 * to WRITING.
 */
export async function runSteps(
  page: Page,
  steps: readonly Step[],
  ctx: StepContext,
  before?: (step: Step, index: number, page: Page) => Promise<void>,
  commit?: (step: Step, index: number, page: Page) => Promise<void>,
): Promise<StepsResult> {
  const extracted: Record<string, string> = {};
  const downloads: StepsResult['downloads'] = [];
  let current = page;
  for (const [index, step] of steps.entries()) {
    await before?.(step, index, current);
    const at = current;
    const result = await runStep(
      current,
      step,
      { ...ctx, params: { ...ctx.params, ...extracted } },
      commit && (() => commit(step, index, at)),
    );
    current = result.page;
    if (result.extracted && typeof result.extracted.value === 'string') extracted[result.extracted.as] = result.extracted.value;
    if (result.download) downloads.push(result.download);
  }
  return { page: current, extracted, downloads };
}

/** The dialogs a page has seen, for the evidence record. */
export function dialogsSeen(page: Page): DialogRecord[] {
  return [...(policies.get(page)?.seen ?? [])];
}

/** Forgets the dialogs a page has seen, so a reused page reports only its current task's. */
export function resetDialogPolicy(page: Page): void {
  const policy = policies.get(page);
  if (!policy) return;
  policy.seen.length = 0;
  policy.apiStatuses.length = 0;
  policy.expected = undefined;
}
