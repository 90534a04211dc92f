import type { z } from 'zod';
import { NamedError } from '../domain/errors.js';

/** A zod failure rendered as "<source>: <field.path>: <message>" lines a person can act on. */
export class ValidationError extends NamedError {
  override name = 'ValidationError';
  constructor(
    readonly source: string,
    readonly issues: Array<{ path: string; message: string }>,
  ) {
    super(`${source} is invalid:\n${issues.map((i) => `  - ${i.path || '(root)'}: ${i.message}`).join('\n')}`);
  }

  static fromZod(source: string, error: z.ZodError): ValidationError {
    return new ValidationError(
      source,
      error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: readable(issue) })),
    );
  }
}

/** zod says "expected string, received undefined" for a missing field; a person needs to hear that it is required. */
function readable(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
    const field = issue.path.map(String).at(-1) ?? 'it';
    return `is required: add ${field} (${issue.message.replace(/^Invalid input: /, '')})`;
  }
  return issue.message;
}

/** Parses with a schema and throws a ValidationError naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, source: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw ValidationError.fromZod(source, result.error);
  return result.data;
}
