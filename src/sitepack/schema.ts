import { z } from 'zod';
import { FrameSelector, isRegExp, Locator, Scope, Step } from './action-language.js';
import { ActionParams } from './params.js';
import { DECIMAL_SEPARATORS } from '../domain/amount.js';
import { EXPORT_DELIMITERS, EXPORT_ENCODINGS } from '../lib/export-format.js';

/**
 * A site pack describes one vendor back office declaratively: how to log in and
 * notice a lost session, how to read the discrepancy list, and each action with
 * its reversibility, steps per tool tier, expected post-state and inverse.
 * Adding a vendor means writing a pack, not code.
 */

export const Reversibility = z.enum(['read_only', 'reversible', 'irreversible']);
export type Reversibility = z.infer<typeof Reversibility>;

export const ReadbackSource = z.enum(['list', 'detail', 'export', 'api']);
export type ReadbackSource = z.infer<typeof ReadbackSource>;

export const Tier = z.enum(['api', 'mcp', 'browser', 'visual']);
export type Tier = z.infer<typeof Tier>;

const Identifier = z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'must be lower_snake_case (a-z, 0-9, _)');
const StatusCode = z.string().regex(/^[A-Z][A-Z_]{0,30}$/, 'status codes are UPPER_SNAKE_CASE');
const PathTemplate = z
  .string()
  .min(1)
  .refine((u) => u.startsWith('/') && !u.startsWith('//'), 'must be a path starting with a single /');

/**
 * The second factor a login asks for after the password (a TOTP code): where the code is typed, how it is
 * submitted and what the vendor shows when it refuses the code. The code is computed from the identity's TOTP
 * secret (credentials.totp_secret) with the vendor's parameters below (the ones its enrolment QR code carries).
 */
export const SecondFactor = z
  .object({
    /** The field the code is typed into, e.g. { label: 动态验证码 }. */
    field: Locator,
    /** The button that submits the code; without it the code is submitted with Enter in the field. */
    submit: Locator.optional(),
    /** Texts the vendor shows when it refuses a code (substrings), e.g. [验证码错误]. */
    rejected: z.array(z.string().min(1)).min(1, 'list the text(s) the vendor shows for a wrong code, e.g. rejected: [验证码错误]'),
    kind: z.literal('totp').default('totp'),
    /** Seconds per code: 30 unless the vendor's enrolment says otherwise. */
    period: z.number().int().min(5, 'period is the seconds per code (5-300; most vendors use 30)').max(300).default(30),
    digits: z.number().int().min(6, 'digits is 6, 7 or 8').max(8, 'digits is 6, 7 or 8').default(6),
    algorithm: z.enum(['SHA1', 'SHA256', 'SHA512']).default('SHA1'),
  })
  .strict();
export type SecondFactor = z.infer<typeof SecondFactor>;

const ApiRequest = z
  .object({
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']),
    path: PathTemplate,
    /** JSON body; string values may use {{param}} placeholders. */
    body: z.record(z.string(), z.string()).default({}),
    /** Header that carries Paperclip's idempotency key, when the vendor honours one. */
    idempotencyHeader: z.string().min(1).optional(),
  })
  .strict();

/**
 * One stage of a browser write. A stage whose `done` locator shows once its page
 * is open (after its leading open/wait_for/expect steps) has already landed and is
 * skipped: a re-entered or retried action never repeats a vendor write it made.
 */
const Stage = z
  .object({
    name: Identifier,
    steps: z.array(Step).min(1),
    done: z.object({ target: Locator, within: Scope.optional() }).strict().optional(),
  })
  .strict();
export type Stage = z.infer<typeof Stage>;

/** Steps that only look: they may navigate and wait, never click, type or download. */
const READ_ONLY_STEPS = ['open', 'wait_for', 'expect'];

/**
 * What the page shows once a write has settled; the "after" screenshot waits for it. A page that
 * does not refresh by itself (an SPA's detail view, a row patched to an interim status) is
 * re-opened by `steps` until it shows, so the picture never pairs a success toast with a stale
 * or interim status.
 */
const Settled = z
  .object({
    /** Read-only steps (open, wait_for, expect) re-run until the target shows, e.g. open the item's page again. */
    steps: z
      .array(Step)
      .min(1)
      .max(5)
      .refine((steps) => steps.every((step) => READ_ONLY_STEPS.includes(step.action)), {
        message: `settled.steps only look again (${READ_ONLY_STEPS.join(', ')}); a click or a fill here could write twice`,
      })
      .optional(),
    target: Locator,
    within: Scope.optional(),
    state: z.enum(['visible', 'hidden']).default('visible'),
    timeoutMs: z.number().int().min(100).max(60_000).default(5000),
  })
  .strict();

const BrowserTier = z
  .object({
    /** A single-stage action: the steps, with the vendor-changing clicks marked `commit`. */
    steps: z.array(Step).min(1).optional(),
    /** An action made of several vendor writes (e.g. save a reason, then resolve). */
    stages: z.array(Stage).min(1).max(6).optional(),
    settled: Settled.optional(),
  })
  .strict()
  .superRefine((tier, ctx) => {
    if ((tier.steps === undefined) === (tier.stages === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a browser tier has either steps or stages' });
    }
    const stages = tier.stages ?? [];
    if (new Set(stages.map((stage) => stage.name)).size !== stages.length) {
      ctx.addIssue({ code: 'custom', path: ['stages'], message: 'stage names must be unique' });
    }
  });

/** The stages of a browser tier (a plain `steps` list is one stage named `write`). */
export function stagesOf(tier: z.infer<typeof BrowserTier>): Stage[] {
  return tier.stages ?? [{ name: 'write', steps: tier.steps ?? [] }];
}

const Pattern = z.string().min(1).max(300).refine(isRegExp, 'must be a valid regular expression (JavaScript syntax)');

/**
 * Where one value is read, inside a row of the list or on a page: the cell under
 * a column header, the value shown next to a label, the text of a semantic
 * locator, or a regular expression over the text (group 1, else the whole match).
 * `regex` may also narrow what one of the others found.
 */
export const FieldSource = z
  .object({
    column: z.string().min(1).max(100).optional(),
    label: z.string().min(1).max(100).optional(),
    locator: Locator.optional(),
    regex: Pattern.optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    const n = [f.column, f.label, f.locator].filter((v) => v !== undefined).length;
    if (n > 1) ctx.addIssue({ code: 'custom', message: 'a field is read from one of column, label or locator (regex may narrow it)' });
    if (n === 0 && f.regex === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a field needs one of column, label, locator or regex' });
    }
  });
export type FieldSource = z.infer<typeof FieldSource>;

/**
 * The vendor's own figures an action shows its approver (`approval.show`): each the name of a field the pre-state
 * read takes from the vendor, never from the task: one of the action's own `approval.fields` (read on the detail
 * page), else a `detail.fields` entry, else a `list.fields` entry (the item's row). Checked against the pack at load.
 */
export const ApprovalFigures = z
  .object({
    show: z
      .array(Identifier, { error: 'approval.show lists field names, e.g. show: [amount]' })
      .min(1, 'approval.show names at least one field, e.g. show: [amount]')
      .max(10, 'approval.show names at most 10 fields'),
    /** Fields of the action's own, read on the item's detail page like `detail.fields`. */
    fields: z.record(Identifier, FieldSource).default({}),
  })
  .strict();
export type ApprovalFigures = z.infer<typeof ApprovalFigures>;

/**
 * A typed parameter tied to a vendor figure: the task's `param` must equal the figure `equals`, compared as amounts
 * in cents, during the pre-state read, before any approval is requested (e.g. the amount a confirmation dialog asks
 * to be typed: `confirm: { param: amount, equals: amount }`).
 */
export const ConfirmFigure = z.object({ param: Identifier, equals: Identifier }).strict();

/**
 * The longest undo window a pack may declare: it is waited out inside the write step, which has its own time limit
 * (sized for it in src/contracts/sizing.ts, whose constant this is).
 */
export { MAX_UNDO_WINDOW_SECONDS } from '../contracts/sizing.js';
import { MAX_UNDO_WINDOW_SECONDS } from '../contracts/sizing.js';
const UNDO_WINDOW_HINT =
  `undoWindowSeconds is the vendor's undo window in whole seconds, 0 to ${MAX_UNDO_WINDOW_SECONDS} ` +
  '(the seconds its "undo" toast offers, e.g. undoWindowSeconds: 5)';

export const SiteAction = z
  .object({
    description: z.string().min(1),
    reversibility: Reversibility,
    /** Name of the action that undoes this one; required for reversible actions. */
    inverse: Identifier.optional(),
    /** The item must be in one of these states for the action to make sense. */
    appliesTo: z.array(StatusCode).min(1),
    /** Where the item should settle once the write has landed. */
    targetStatus: StatusCode.optional(),
    /** Intermediate states the vendor shows while a write settles. */
    settlingStatuses: z.array(StatusCode).default([]),
    /**
     * For writes that change no status (e.g. a note): readback looks for this
     * text, filled from the params, in a field of the item read from the vendor API.
     */
    verify: z
      .object({ apiField: z.string().min(1), contains: z.string().min(1) })
      .strict()
      .optional(),
    /** Parameters the caller must supply besides the item's own fields, each with its schema (see params.ts). */
    params: ActionParams,
    /**
     * The frame the browser tier's steps act in (a portal's work area): every step but `open` (which loads the top
     * page) is searched inside it, and so are the stages' done checks and the settled state. A step with
     * `within: { top: true }` acts on the top page (the portal's menu).
     */
    frame: FrameSelector.optional(),
    /**
     * The vendor holds this action's write in an optimistic undo window: its page shows success at once and sends the
     * change only if it stays open that many seconds (a toast with an undo button). The browser write keeps the page
     * open that long after each stage's last commit click before it navigates or closes it; readback still decides.
     */
    undoWindowSeconds: z
      .number({ error: UNDO_WINDOW_HINT })
      .int(UNDO_WINDOW_HINT)
      .min(0, UNDO_WINDOW_HINT)
      .max(MAX_UNDO_WINDOW_SECONDS, UNDO_WINDOW_HINT)
      .optional(),
    /** The vendor's figures the approver is shown, read during the pre-state read (see ApprovalFigures). */
    approval: ApprovalFigures.optional(),
    /** A typed parameter that must equal a vendor figure before the approval is requested (see ConfirmFigure). */
    confirm: ConfirmFigure.optional(),
    tiers: z
      .object({
        api: ApiRequest.optional(),
        browser: BrowserTier.optional(),
      })
      .strict()
      .refine((t) => t.api !== undefined || t.browser !== undefined, 'an action needs at least one tier (api or browser)'),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.reversibility === 'reversible' && !a.inverse) {
      ctx.addIssue({ code: 'custom', path: ['inverse'], message: 'a reversible action must name its inverse action' });
    }
    if (a.reversibility === 'irreversible' && a.inverse) {
      ctx.addIssue({
        code: 'custom',
        path: ['inverse'],
        message: 'an irreversible action cannot have an inverse; mark it reversible instead',
      });
    }
    const browser = a.tiers.browser;
    const steps = browser ? stagesOf(browser).flatMap((stage) => stage.steps) : [];
    if (browser && a.reversibility !== 'read_only' && !steps.some((step) => step.action === 'click' && step.commit)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tiers', 'browser', browser.steps ? 'steps' : 'stages'],
        message: 'mark every click that changes vendor state with commit: true (the claim moves to WRITING before the first)',
      });
    }
    const extracted = steps.flatMap((step) => (step.action === 'extract' ? [step.as] : []));
    const clash = extracted.find((name) => Object.hasOwn(a.params, name) || name === 'billNo' || name === 'tenant');
    if (clash) {
      ctx.addIssue({
        code: 'custom',
        path: ['tiers', 'browser'],
        message: `extract as "${clash}" would shadow a parameter; name it differently`,
      });
    }
    if (a.confirm) {
      const spec = Object.hasOwn(a.params, a.confirm.param) ? a.params[a.confirm.param] : undefined;
      if (!spec) {
        ctx.addIssue({
          code: 'custom',
          path: ['confirm', 'param'],
          message: `names "${a.confirm.param}", which is not a parameter of this action; declare it under params (type: decimal) or name one that is`,
        });
      } else if (spec.type !== 'decimal') {
        ctx.addIssue({
          code: 'custom',
          path: ['confirm', 'param'],
          message: `"${a.confirm.param}" is compared as an amount: declare it with type: decimal`,
        });
      }
    }
    if (a.undoWindowSeconds !== undefined && !browser) {
      ctx.addIssue({
        code: 'custom',
        path: ['undoWindowSeconds'],
        message: 'undoWindowSeconds keeps the browser page open after the commit click; declare tiers.browser, or drop it for an API write',
      });
    }
    if (a.reversibility !== 'read_only' && !a.targetStatus && !a.verify) {
      ctx.addIssue({ code: 'custom', path: ['targetStatus'], message: 'a write needs targetStatus or verify, so readback can check it' });
    }
  });
export type SiteAction = z.infer<typeof SiteAction>;

/** What one row of the list is. */
export const Rows = z
  .object({
    /**
     * Rows of a table or an ARIA grid (optionally the one with this accessible name); fields by column header.
     * `virtual`: the grid draws only the rows in view (a virtualising data grid): reading scrolls its scroll container
     * until every row has been seen, and finding one row scrolls to it. A grid stating aria-rowcount above the rows it
     * draws is read that way without the flag. `filter`: the grid's own filter box; finding one row types the item key
     * into it instead of scrolling.
     */
    table: z
      .object({
        name: z.string().min(1).max(100).optional(),
        virtual: z.boolean().optional(),
        filter: Locator.optional(),
      })
      .strict()
      .optional(),
    /** Each element this locator finds is a row, e.g. role=listitem or role=article cards. */
    items: Locator.optional(),
    /** Cards without any role: each row is the largest element around exactly one match of this locator. */
    around: Locator.optional(),
  })
  .strict()
  .refine((r) => [r.table, r.items, r.around].filter((v) => v !== undefined).length === 1, 'rows is one of table, items or around');
export type Rows = z.infer<typeof Rows>;

const Paging = z
  .object({
    /** A next-page control; reading stops when it is gone or disabled. */
    next: Locator.optional(),
    /** The list steps use {{page}} (1, 2, ...); reading stops at a page with no new rows. */
    parameter: z.literal('page').optional(),
    /** A "load more" control that appends rows; pressed until it is gone. */
    loadMore: Locator.optional(),
  })
  .strict()
  .refine(
    (p) => [p.next, p.parameter, p.loadMore].filter((v) => v !== undefined).length === 1,
    'paging is one of next, parameter or loadMore',
  );

/**
 * Where the list's page states how many rows the list has (`共 30 条`, `1–20 of 30`): a regular expression whose
 * group 1 is the number, over the text of `locator` (or the whole page). A list read short of it is an error.
 */
const ListTotal = z
  .object({
    pattern: Pattern.refine((p) => /\((?!\?)/.test(p), 'list.total.pattern captures the number in group 1, e.g. 共\\s*(\\d+)\\s*条'),
    locator: Locator.optional(),
  })
  .strict();

const StatusMap = z.record(z.string().min(1), StatusCode);

/**
 * The request that signs an identity in for a cookie-authenticated API: the
 * credentials go as data ({{username}} and {{password}} in the body, JSON or a
 * form), and the cookies the answer sets authenticate the api calls after it.
 */
const ApiLogin = z
  .object({
    url: PathTemplate,
    method: z.enum(['POST', 'PUT']).default('POST'),
    /** How the body is sent: a JSON object, or an application/x-www-form-urlencoded form. */
    format: z.enum(['json', 'form']).default('json'),
    /** Field -> value; values may use {{username}} and {{password}}. */
    body: z
      .record(z.string().min(1), z.string())
      .refine((body) => Object.values(body).some((v) => v.includes('{{password}}')), 'api.login.body must send {{password}} in a field'),
  })
  .strict();
export type ApiLogin = z.infer<typeof ApiLogin>;

const PARAMS_OF_LIST = 'tenant, page and the tenant site_params';

export const RequestPaceSpec = z
  .object({
    maxRequests: z
      .number({ error: 'pace.maxRequests must be a whole number of requests, such as 24' })
      .int('pace.maxRequests must be a whole number of requests, such as 24')
      .min(1, 'pace.maxRequests must be at least 1')
      .max(10_000, 'pace.maxRequests is at most 10000; for a looser limit declare no pace'),
    perSeconds: z
      .number({ error: 'pace.perSeconds must be a number of seconds, such as 10' })
      .positive('pace.perSeconds must be more than 0, such as 10')
      .max(3600, 'pace.perSeconds is at most 3600 (an hour)'),
    paths: z
      .array(z.string().regex(/^\//, 'pace.paths are path prefixes starting with /, such as /api/'))
      .min(1, 'pace.paths needs at least one prefix, or leave it out to count every path')
      .max(20, 'pace.paths holds at most 20 prefixes')
      .optional(),
    assets: z.boolean({ error: 'pace.assets is true or false' }).default(false),
  })
  .strict();
export type RequestPaceSpec = z.infer<typeof RequestPaceSpec>;

export const SitePack = z
  .object({
    version: z.literal(2, { error: 'site packs are version 2; see docs/sitepack.md for the format (version 1 packs must be migrated)' }),
    site: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'site ids are lower-kebab-case'),
    description: z.string().min(1),
    /** Item keys (bill numbers) must match this before they go anywhere near a page. */
    itemKeyPattern: z
      .string()
      .refine((p) => isRegExp(p) && p.startsWith('^') && p.endsWith('$'), 'must be a valid regular expression anchored with ^ and $'),
    /**
     * Names of the vendor's per-session secrets on its pages: hidden form fields (e.g. `_csrf`) and meta
     * tags (e.g. `csrf-token`). Their values are redacted from the write's Playwright trace (DOM
     * snapshots, recorded request bodies, stored responses) before it is stored as evidence.
     */
    pageSecrets: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/, 'pageSecrets are field or meta names such as _csrf or csrf-token'))
      .max(20)
      .default([]),
    login: z
      .object({
        url: PathTemplate,
        /** Steps filling {{username}} and {{password}}; password fills must be secret. */
        steps: z.array(Step).min(1),
        /** Visible only once logged in. */
        loggedIn: Locator,
        /**
         * A URL that needs a session: answered with 401/403, or a redirect to a
         * sessionLost URL, it means a stored session is gone.
         */
        probeUrl: PathTemplate,
        /** A second factor asked after the steps (docs/sitepack.md, "Second factor"). */
        secondFactor: SecondFactor.optional(),
      })
      .strict(),
    /**
     * What the page says after a commit click. UI feedback never decides the
     * verdict; it only tells readback whether the vendor refused outright
     * (a settled negative readback may then allow a retry) or timed out.
     */
    writeFeedback: z
      .object({
        rejected: z.array(z.string().min(1)).default([]),
        timedOut: z.array(z.string().min(1)).default([]),
        /** Texts the vendor shows once it accepted a write (a toast); they end the wait for an answer early. */
        accepted: z.array(z.string().min(1)).default([]),
        /**
         * Where the vendor's answer shows, for notifications without an ARIA role. Without it the wait
         * looks for a live region (role alert or status) and the texts above.
         */
        locator: Locator.optional(),
        /** How long to wait for an answer after the last commit click before readback takes over. */
        timeoutMs: z.number().int().min(0).max(30_000).default(3000),
      })
      .strict()
      .default({ rejected: [], timedOut: [], accepted: [], timeoutMs: 3000 }),
    /** Any one of these means the vendor session is gone: the item fails loudly, no retry. */
    sessionLost: z
      .object({
        /** Fragments of the URL after the host (path, query and hash), e.g. /login or #/login. */
        urlContains: z.array(z.string().min(1)).default([]),
        /** Texts on the page or in a native alert, e.g. 会话已过期. */
        texts: z.array(z.string().min(1)).default([]),
        /** A login form showing again, e.g. { label: 密码 }. */
        loginForm: Locator.optional(),
        /** Answers to the page's own fetch/XHR calls that mean the session is gone. */
        httpStatus: z.array(z.union([z.literal(401), z.literal(403), z.literal(419), z.literal(440)])).default([]),
      })
      .strict()
      .refine(
        (s) => s.urlContains.length + s.texts.length + s.httpStatus.length > 0 || s.loginForm !== undefined,
        'declare at least one session-loss signal (urlContains, texts, loginForm or httpStatus)',
      ),
    /**
     * The vendor's rate limit, as a pace Paperclip keeps per identity (docs/sitepack.md, "Request pace"): at most
     * maxRequests requests to the vendor in any perSeconds, counted over the identity's browser contexts (page loads
     * and the pages' own calls; scripts, styles, images and fonts only with `assets: true`) and API reads alike.
     * `paths` narrows what counts to what the vendor counts (path prefixes, e.g. its JSON API). A 429 that still
     * comes is waited out. No pace: no request is intercepted at all.
     */
    pace: RequestPaceSpec.optional(),
    /** Visible text -> status code, used wherever a status is read as text. */
    statuses: StatusMap,
    /** Visible text -> kind code. */
    kinds: z.record(z.string().min(1), Identifier).default({}),
    list: z
      .object({
        /** Steps reaching the list (open, choose the org, search...), filled with tenant, page and the tenant's site_params. */
        steps: z.array(Step).min(1),
        /** The frame the list lives in (steps other than open act in it; rows, total and search are read in it). */
        frame: FrameSelector.optional(),
        rows: Rows,
        key: FieldSource,
        /** status is required; kind, amount and owner are used when present; others are shown by probe. */
        fields: z.record(Identifier, FieldSource).refine((f) => f['status'] !== undefined, 'list.fields needs status'),
        /** Shown when the list is legitimately empty; without it, a list with no rows is an error. */
        empty: Locator.optional(),
        paging: Paging.optional(),
        /** Pages read at most (for a virtualising grid: screens scrolled), so a broken pager cannot loop forever. */
        maxPages: z.number().int().min(1).max(100).default(20),
        /** Where the page states the list's row count; a read that does not reach it fails (aria-rowcount is used unasked). */
        total: ListTotal.optional(),
        /** Steps that narrow the list to {{billNo}} (a search box): the `list` readback and ownership use them. */
        search: z.array(Step).min(1).optional(),
        /**
         * The decimal separator of the amounts the list shows: '.' (1,234.50) or ',' (1.234,50). The other one,
         * spaces and apostrophes are read as grouping; currency marks and (12.00) negatives are understood.
         */
        decimal: z
          .enum(DECIMAL_SEPARATORS, { error: `list.decimal must be one of ${DECIMAL_SEPARATORS.map((d) => `"${d}"`).join(', ')}` })
          .default('.'),
      })
      .strict(),
    /** An item's own page: reached by steps (open it, or search then open), status and fields read as text. */
    detail: z
      .object({
        steps: z.array(Step).min(1),
        /** The frame the detail page lives in (steps other than open act in it; status and fields are read in it). */
        frame: FrameSelector.optional(),
        status: FieldSource,
        fields: z.record(Identifier, FieldSource).default({}),
      })
      .strict()
      .optional(),
    /** An export file (CSV or XLSX): fetched with the session cookie from url, or by steps ending in a download. */
    export: z
      .object({
        url: PathTemplate.optional(),
        steps: z.array(Step).min(1).optional(),
        /** The frame the export's steps act in (steps other than open). */
        frame: FrameSelector.optional(),
        keyColumn: z.string().min(1),
        statusColumn: z.string().min(1),
        ownerColumn: z.string().min(1).optional(),
        /** Cell value -> status code; defaults to statuses, and a value that already is a code stays one. */
        statusMap: StatusMap.optional(),
        /** A CSV's encoding when it has no byte-order mark and is not UTF-8 (legacy systems serve GBK). XLSX ignores it. */
        encoding: z
          .enum(EXPORT_ENCODINGS, {
            error: `export.encoding must be one of ${EXPORT_ENCODINGS.join(', ')} (without it: UTF-8, or what a BOM says)`,
          })
          .optional(),
        /** A CSV's field separator; exports with a decimal comma often use ';'. */
        delimiter: z
          .enum(EXPORT_DELIMITERS, {
            error: `export.delimiter must be one of ${EXPORT_DELIMITERS.map((d) => JSON.stringify(d)).join(', ')}`,
          })
          .optional(),
      })
      .strict()
      .refine((e) => (e.url === undefined) !== (e.steps === undefined), 'export needs either url or steps (ending in a download)')
      .optional(),
    /** A JSON endpoint for one item, authenticated like the browser (session cookie) or by the identity's token. */
    api: z
      .object({
        itemUrl: PathTemplate,
        auth: z.enum(['cookie', 'token']).default('token'),
        /**
         * With cookie auth: how to get the session cookie without a browser (the login request the
         * vendor's own page sends). Without it, a cookie API is read through a browser session.
         */
        login: ApiLogin.optional(),
        /** Dot path to the item inside the answer ('' for the answer itself), e.g. data.bill. */
        itemPath: z.string().max(100).default(''),
        statusPath: z.string().min(1).max(100),
        ownerPath: z.string().min(1).max(100).optional(),
        /** Value -> status code; a value that already is a status code stays one. */
        statusMap: StatusMap.optional(),
        /** Answers meaning "no such item for this identity". */
        notFoundStatus: z.array(z.number().int().min(400).max(499)).default([403, 404]),
      })
      .strict()
      .refine((api) => api.login === undefined || api.auth === 'cookie', {
        path: ['login'],
        message: 'api.login gets a session cookie; set auth: cookie, or drop login for a token API',
      })
      .optional(),
    /**
     * How routing proves an item belongs to the task's tenant before any write
     * session opens: the owner field of the api, a tenant-filtered search of the
     * list, a detail-page field, or the export's owner column. `value` is what the
     * owner must equal (default {{tenant}}; a tenant's site_params may fill it).
     */
    ownership: z
      .object({
        source: z.enum(['api', 'list', 'detail', 'export']),
        field: Identifier.optional(),
        value: z.string().min(1).max(200).default('{{tenant}}'),
      })
      .strict()
      .optional(),
    actions: z.record(Identifier, SiteAction),
  })
  .strict()
  .superRefine((pack, ctx) => {
    for (const [name, action] of Object.entries(pack.actions)) {
      if (action.inverse && !Object.hasOwn(pack.actions, action.inverse)) {
        ctx.addIssue({
          code: 'custom',
          path: ['actions', name, 'inverse'],
          message: `names "${action.inverse}", which is not an action of this site pack`,
        });
      }
    }
    for (const [name, action] of Object.entries(pack.actions)) checkFigures(pack, name, action, ctx);
    if (pack.list.paging?.parameter && !JSON.stringify(pack.list.steps).includes('{{page}}')) {
      ctx.addIssue({
        code: 'custom',
        path: ['list', 'paging', 'parameter'],
        message: `paging by parameter needs {{page}} in list.steps (filled with ${PARAMS_OF_LIST})`,
      });
    }
    const own = pack.ownership;
    if (own) {
      const missing =
        (own.source === 'api' && !pack.api?.ownerPath && 'api.ownerPath') ||
        (own.source === 'list' && !pack.list.search && 'list.search') ||
        (own.source === 'detail' && !(own.field && pack.detail?.fields[own.field]) && 'detail.fields.<ownership.field>') ||
        (own.source === 'export' && !pack.export?.ownerColumn && 'export.ownerColumn');
      if (missing)
        ctx.addIssue({ code: 'custom', path: ['ownership', 'source'], message: `ownership from ${own.source} needs ${missing}` });
    }
  });
export type SitePack = z.infer<typeof SitePack>;

/** Where a vendor figure of an action is read: its own approval field or a detail field (the detail page), or a list field (its row). */
export function figureSource(
  pack: Pick<SitePack, 'detail' | 'list'>,
  action: Pick<SiteAction, 'approval'>,
  name: string,
): { from: 'detail' | 'list'; field: FieldSource; line: string } | undefined {
  const own = action.approval?.fields;
  if (own && Object.hasOwn(own, name)) return { from: 'detail', field: own[name]!, line: `approval.fields.${name}` };
  const detail = pack.detail?.fields;
  if (detail && Object.hasOwn(detail, name)) return { from: 'detail', field: detail[name]!, line: `detail.fields.${name}` };
  const list = pack.list.fields;
  if (Object.hasOwn(list, name)) return { from: 'list', field: list[name]!, line: `list.fields.${name}` };
  return undefined;
}

/** The figures the pre-state read takes for an action: those it shows, and the one its confirm compares with. */
export function figureNames(action: Pick<SiteAction, 'approval' | 'confirm'>): string[] {
  return [...new Set([...(action.approval?.show ?? []), ...(action.confirm ? [action.confirm.equals] : [])])];
}

function checkFigures(pack: Pick<SitePack, 'detail' | 'list'>, name: string, action: SiteAction, ctx: z.RefinementCtx): void {
  const defined = (figure: string) => figureSource(pack, action, figure) !== undefined;
  const known = () =>
    [...Object.keys(action.approval?.fields ?? {}), ...Object.keys(pack.detail?.fields ?? {}), ...Object.keys(pack.list.fields)].join(', ');
  for (const [i, figure] of (action.approval?.show ?? []).entries()) {
    if (!defined(figure)) {
      ctx.addIssue({
        code: 'custom',
        path: ['actions', name, 'approval', 'show', i],
        message:
          `"${figure}" is not a field the pre-state read can take: name one of ${known() || '(none)'}, ` +
          `or define it under actions.${name}.approval.fields (e.g. ${figure}: { label: 金额 })`,
      });
    }
  }
  if (Object.keys(action.approval?.fields ?? {}).length > 0 && !pack.detail) {
    ctx.addIssue({
      code: 'custom',
      path: ['actions', name, 'approval', 'fields'],
      message: "approval.fields are read on the item's detail page: declare detail (steps and status), or use list.fields",
    });
  }
  if (action.confirm && !defined(action.confirm.equals)) {
    ctx.addIssue({
      code: 'custom',
      path: ['actions', name, 'confirm', 'equals'],
      message:
        `"${action.confirm.equals}" is not a field the pre-state read can take: name one of ${known() || '(none)'}, ` +
        `or define it under actions.${name}.approval.fields`,
    });
  }
}
