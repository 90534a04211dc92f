import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** A YAML document as a test edits it. */
export type YamlObject = Record<string, any>;

/**
 * The local config (config/paperclip.local.yaml) and, when `pack` is given, the simulator's pack, as edited
 * copies in a temporary folder: for an embedded-stack test that needs one setting changed. The config's
 * site pack is an absolute path, so it resolves from the temporary folder.
 */
export function localConfigVariant(
  name: string,
  edit: { pack?: (pack: YamlObject) => void; config?: (config: YamlObject) => void },
): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `paperclip-${name}-`));
  const config = parseYaml(readFileSync('config/paperclip.local.yaml', 'utf8')) as YamlObject;
  config['vendor']['site_pack'] = resolve(config['vendor']['site_pack']);
  if (edit.pack) {
    const pack = parseYaml(readFileSync(config['vendor']['site_pack'], 'utf8')) as YamlObject;
    edit.pack(pack);
    config['vendor']['site_pack'] = join(dir, `${name}-pack.yaml`);
    writeFileSync(config['vendor']['site_pack'], stringifyYaml(pack));
  }
  edit.config?.(config);
  const path = join(dir, 'paperclip.yaml');
  writeFileSync(path, stringifyYaml(config));
  return { path: resolve(path), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
