import { z } from 'zod';
import { own } from '../lib/own.js';
import { freeTextProblem } from '../domain/visible-text.js';

/**
 * The parameters an action takes, each with its own schema: type, format,
 * length, allowed values, required. Every value is one line of text: it may end
 * up in a vendor form, an approval email, an approval page and the logs, so a
 * line break, a control or a bidirectional control character is refused
 * rather than escaped differently in each of those places; and a value that
 * shows nothing (zero-width or format characters, a lone combining mark) is as
 * blank as an empty one (src/domain/visible-text.ts).
 */

const ParamName = z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'must be lower_snake_case (a-z, 0-9, _)');

/** Longest value any parameter may declare (the task schema's bound). */
export const MAX_PARAM_LENGTH = 500;

const AnchoredPattern = z.string().refine((p) => {
  try {
    new RegExp(p, 'u');
    return p.startsWith('^') && p.endsWith('$');
  } catch {
    return false;
  }
}, 'must be a valid regular expression anchored with ^ and $');

export const ParamSpec = z
  .object({
    /**
     * text: any single line; decimal: a non-negative amount with at most two
     * decimals (1234.50); integer: digits; enum: one of `values`.
     */
    type: z.enum(['text', 'decimal', 'integer', 'enum']).default('text'),
    /** A required parameter must be given and not blank (text with no visible character counts as blank). */
    required: z.boolean().default(true),
    minLength: z.number().int().min(1).default(1),
    maxLength: z.number().int().min(1).max(MAX_PARAM_LENGTH).default(200),
    /** An extra format the value must match, anchored with ^ and $. */
    pattern: AnchoredPattern.optional(),
    /** The allowed values of an enum. */
    values: z.array(z.string().min(1)).min(1).optional(),
    description: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if (spec.type === 'enum' && !spec.values)
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'an enum parameter lists its allowed values' });
    if (spec.type !== 'enum' && spec.values) ctx.addIssue({ code: 'custom', path: ['values'], message: 'values is only for type: enum' });
    if (spec.minLength > spec.maxLength)
      ctx.addIssue({ code: 'custom', path: ['minLength'], message: 'minLength is larger than maxLength' });
  });
export type ParamSpec = z.output<typeof ParamSpec>;

/**
 * An action's `params`: a map of name to schema, or (shorthand) a list of
 * names, each a required single-line text of at most 200 characters.
 */
export const ActionParams = z
  .union([z.array(ParamName), z.record(ParamName, ParamSpec)])
  .default({})
  .transform((params): Record<string, ParamSpec> => {
    if (!Array.isArray(params)) return params;
    return Object.fromEntries(params.map((name) => [name, ParamSpec.parse({})]));
  });
export type ActionParams = z.output<typeof ActionParams>;

const FORMATS: Record<ParamSpec['type'], { test: RegExp; says: string } | undefined> = {
  text: undefined,
  decimal: { test: /^\d{1,12}(\.\d{1,2})?$/, says: 'a non-negative amount with at most two decimals, e.g. 1234.50' },
  integer: { test: /^\d{1,15}$/, says: 'a whole number' },
  enum: undefined,
};

export interface ParamProblem {
  param: string;
  message: string;
}

/**
 * Checks an action's parameter values against its schemas. Returns the first
 * problem (naming the parameter and what it should be), or undefined.
 */
export function checkParams(action: string, specs: ActionParams, values: Readonly<Record<string, string>>): ParamProblem | undefined {
  const declared = Object.keys(specs);
  for (const name of Object.keys(values)) {
    if (!own(specs, name)) {
      const takes = declared.length > 0 ? `it takes ${declared.join(', ')}` : 'it takes no parameters';
      return { param: name, message: `"${name}" is not a parameter of action "${action}"; ${takes}` };
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    const value = own(values, name);
    if (value === undefined || value.trim() === '') {
      if (spec.required) return { param: name, message: `action "${action}" needs ${name}, and it must not be blank` };
      continue;
    }
    // Every value, whatever its type: one line, no bidirectional controls, at least one visible character.
    const problem = freeTextProblem(value);
    if (problem) return { param: name, message: `${name} ${problem}` };
    if (value.length < spec.minLength) return { param: name, message: `${name} is at least ${spec.minLength} characters` };
    if (value.length > spec.maxLength) return { param: name, message: `${name} is at most ${spec.maxLength} characters` };
    const format = FORMATS[spec.type];
    if (format && !format.test.test(value)) return { param: name, message: `${name} must be ${format.says}` };
    if (spec.values && !spec.values.includes(value)) return { param: name, message: `${name} must be one of ${spec.values.join(', ')}` };
    if (spec.pattern && !new RegExp(spec.pattern, 'u').test(value)) return { param: name, message: `${name} must match ${spec.pattern}` };
  }
  return undefined;
}
