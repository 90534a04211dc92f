import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { ValidationError } from '../config/errors.js';

/** Parses `--flag value` arguments and validates them; an unknown or bad flag is a clear error. */
export function parseFlags<S extends z.ZodType>(
  argv: string[],
  options: Record<string, { type: 'string' | 'boolean'; short?: string }>,
  schema: S,
  command: string,
): { flags: z.output<S>; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ValidationError(`paperclip ${command}`, [{ path: '', message: (error as Error).message }]);
  }
  const result = schema.safeParse(parsed.values);
  if (!result.success) {
    throw new ValidationError(
      `paperclip ${command}`,
      result.error.issues.map((i) => ({ path: `--${i.path.map(String).join('.')}`, message: i.message })),
    );
  }
  return { flags: result.data, positionals: parsed.positionals };
}
