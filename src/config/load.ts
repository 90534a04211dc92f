import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { PaperclipConfig } from './schema.js';
import { parseOrThrow, ValidationError } from './errors.js';

export function parseConfig(yamlText: string, source = 'config'): PaperclipConfig {
  let raw: unknown;
  try {
    raw = parseYaml(yamlText);
  } catch (error) {
    throw new ValidationError(source, [{ path: '', message: `not valid YAML: ${(error as Error).message}` }]);
  }
  return parseOrThrow(PaperclipConfig, raw, source);
}

export function loadConfig(path: string): PaperclipConfig {
  return parseConfig(readFileSync(path, 'utf8'), path);
}
