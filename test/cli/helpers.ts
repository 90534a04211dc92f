import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runNode, type Finished } from '../support/processes.js';

/** `npx paperclip ...` as a user runs it: the package's bin launcher in a child process. */
export function paperclip(args: string[]): Promise<Finished> {
  return runNode(['bin/paperclip.js', ...args]);
}

/** The last stdout line as JSON (the summary or outcome line). */
export function lastJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

/** A temp folder with a copy of the local config pointed at a back office, removed by `remove`. */
export function configFor(vendorBaseUrl: string, sitePack = 'sitepacks/vendor-sim.yaml'): { dir: string; config: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-cli-'));
  const text = readFileSync('config/paperclip.local.yaml', 'utf8')
    .replace(/base_url: http:\/\/127\.0\.0\.1:4100.*/, `base_url: ${vendorBaseUrl}`)
    .replace(/site_pack: .*/, `site_pack: ${resolve(sitePack)}`);
  const config = join(dir, 'paperclip.yaml');
  writeFileSync(config, text);
  return { dir, config, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
