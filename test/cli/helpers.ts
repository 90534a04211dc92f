import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** `npx paperclip ...` as a user runs it: the package's bin launcher in a child process. */
export function paperclip(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, ['bin/paperclip.js', ...args], {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
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
