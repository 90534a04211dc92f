import { z } from 'zod';
import { Locator, Step } from './action-language.js';
import { ActionParams } from './params.js';

/**
 * A site pack describes one vendor back office declaratively: how to log in and
 * notice a lost session, how to read the discrepancy list, and each action with
 * its reversibility, steps per tool tier, expected post-state and inverse.
 * Adding a vendor means writing a pack, not code.
 */

export const Reversibility = z.enum(['read_only', 'reversible', 'irreversible']);
export type Reversibility = z.infer<typeof Reversibility>;

export const ReadbackSource = z.enum(['list', 'detail', 'settlement_file', 'api']);
export type ReadbackSource = z.infer<typeof ReadbackSource>;

export const Tier = z.enum(['api', 'mcp', 'browser', 'visual']);
export type Tier = z.infer<typeof Tier>;

const Identifier = z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'must be lower_snake_case (a-z, 0-9, _)');
const StatusCode = z.string().regex(/^[A-Z][A-Z_]{0,30}$/, 'status codes are UPPER_SNAKE_CASE');
const PathTemplate = z
  .string()
  .min(1)
  .refine((u) => u.startsWith('/') && !u.startsWith('//'), 'must be a path starting with a single /');

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
    tiers: z
      .object({
        api: ApiRequest.optional(),
        browser: z
          .object({ steps: z.array(Step).min(1) })
          .strict()
          .optional(),
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
    if (a.reversibility !== 'read_only' && !a.targetStatus && !a.verify) {
      ctx.addIssue({ code: 'custom', path: ['targetStatus'], message: 'a write needs targetStatus or verify, so readback can check it' });
    }
  });
export type SiteAction = z.infer<typeof SiteAction>;

export const SitePack = z
  .object({
    site: z.string().regex(/^[a-z][a-z0-9-]{1,40}$/, 'site ids are lower-kebab-case'),
    description: z.string().min(1),
    /** Item keys (bill numbers) must match this before they go anywhere near a page. */
    itemKeyPattern: z.string().refine((p) => {
      try {
        new RegExp(p);
        return p.startsWith('^') && p.endsWith('$');
      } catch {
        return false;
      }
    }, 'must be a valid regular expression anchored with ^ and $'),
    login: z
      .object({
        url: PathTemplate,
        /** Steps filling {{username}} and {{password}}; password fills must be secret. */
        steps: z.array(Step).min(1),
        /** Visible only once logged in. */
        loggedIn: Locator,
        /** A page that needs a session: a redirect to a sessionLost URL means the stored session is gone. */
        probeUrl: PathTemplate,
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
      })
      .strict()
      .default({ rejected: [], timedOut: [] }),
    sessionLost: z
      .object({
        urlContains: z.array(z.string().min(1)).min(1),
        texts: z.array(z.string().min(1)).min(1),
      })
      .strict(),
    list: z
      .object({
        /** Opened with {{tenant}} and {{page}} filled in (URL-encoded). */
        url: PathTemplate,
        /** Steps run after opening, e.g. pressing 查询. */
        querySteps: z.array(Step).default([]),
        /** The attribute on each row carrying the item key (the structured row contract). */
        rowKeyAttribute: z.string().regex(/^data-[a-z-]+$/, 'must be a data-* attribute'),
        /** data-field name of each item field we read. */
        fields: z.object({ key: Identifier, status: Identifier, kind: Identifier.optional(), amount: Identifier.optional() }).strict(),
        /** Visible label -> status code. */
        statusLabels: z.record(z.string(), StatusCode),
        /** Visible label -> kind code. */
        kindLabels: z.record(z.string(), Identifier).default({}),
        nextPage: Locator.optional(),
        /** Pages read at most, so a broken pager cannot loop forever. */
        maxPages: z.number().int().min(1).max(100).default(20),
      })
      .strict(),
    detail: z.object({ url: PathTemplate, statusField: Identifier }).strict().optional(),
    settlementFile: z
      .object({ url: PathTemplate, keyColumn: z.string().min(1), statusColumn: z.string().min(1) })
      .strict()
      .optional(),
    api: z
      .object({
        itemUrl: PathTemplate,
        statusField: z.string().min(1),
      })
      .strict()
      .optional(),
    actions: z.record(Identifier, SiteAction),
  })
  .strict()
  .superRefine((pack, ctx) => {
    for (const [name, action] of Object.entries(pack.actions)) {
      if (action.inverse && !pack.actions[action.inverse]) {
        ctx.addIssue({
          code: 'custom',
          path: ['actions', name, 'inverse'],
          message: `names "${action.inverse}", which is not an action of this site pack`,
        });
      }
    }
  });
export type SitePack = z.infer<typeof SitePack>;
