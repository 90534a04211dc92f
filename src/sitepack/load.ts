import { loadYamlAs, parseYamlAs } from '../config/yaml.js';
import { SitePack } from './schema.js';

export function parseSitePack(yamlText: string, source = 'site pack'): SitePack {
  return parseYamlAs(SitePack, yamlText, source);
}

export function loadSitePack(path: string): SitePack {
  return loadYamlAs(SitePack, path);
}
