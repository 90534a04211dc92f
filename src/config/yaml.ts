import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { parseOrThrow, ValidationError } from './errors.js';

/** YAML text validated by a schema; bad YAML and a failed check are both a ValidationError naming the source. */
export function parseYamlAs<S extends z.ZodType>(schema: S, yamlText: string, source: string): z.output<S> {
  let raw: unknown;
  try {
    raw = parseYaml(yamlText);
  } catch (error) {
    throw new ValidationError(source, [{ path: '', message: `not valid YAML: ${(error as Error).message}` }]);
  }
  return parseOrThrow(schema, raw, source);
}

/** A YAML file validated by a schema; errors name the path. */
export function loadYamlAs<S extends z.ZodType>(schema: S, path: string): z.output<S> {
  return parseYamlAs(schema, readFileSync(path, 'utf8'), path);
}
