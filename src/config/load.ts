import { PaperclipConfig } from './schema.js';
import { loadYamlAs, parseYamlAs } from './yaml.js';

export function parseConfig(yamlText: string, source = 'config'): PaperclipConfig {
  return parseYamlAs(PaperclipConfig, yamlText, source);
}

export function loadConfig(path: string): PaperclipConfig {
  return loadYamlAs(PaperclipConfig, path);
}
