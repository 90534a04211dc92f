import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { SitePack } from './schema.js';
import { parseOrThrow, ValidationError } from '../config/errors.js';

export function parseSitePack(yamlText: string, source = 'site pack'): SitePack {
  let raw: unknown;
  try {
    raw = parseYaml(yamlText);
  } catch (error) {
    throw new ValidationError(source, [{ path: '', message: `not valid YAML: ${(error as Error).message}` }]);
  }
  return parseOrThrow(SitePack, raw, source);
}

export function loadSitePack(path: string): SitePack {
  return parseSitePack(readFileSync(path, 'utf8'), path);
}
