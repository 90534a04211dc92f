import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runNode, type Finished } from '../support/processes.js';
import { useFixture } from '../support/fixture.js';
import { startSimulator } from '../../backoffices/simulator/server.js';
import { SimulatorControl } from '../../backoffices/simulator/control-client.js';
import { startLedgerly } from '../../backoffices/ledgerly/server.js';
import { LedgerlyControl } from '../../backoffices/ledgerly/control-client.js';

/** `npx paperclip ...` as a user runs it: the package's bin launcher in a child process. */
export function paperclip(args: string[]): Promise<Finished> {
  return runNode(['bin/paperclip.js', ...args]);
}

/** Every stdout line as JSON (`run --json-lines`, `items --json`). */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The last stdout line as JSON (the summary or outcome line). */
export function lastJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

/**
 * A temp folder with a copy of a local config (the bundled simulator's by default, or e.g.
 * config/ledgerly.local.yaml) pointed at a back office, removed by `remove`.
 */
export function configFor(
  vendorBaseUrl: string,
  sitePack = 'sitepacks/vendor-sim.yaml',
  configFile = 'config/paperclip.local.yaml',
): { dir: string; config: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-cli-'));
  const text = readFileSync(configFile, 'utf8')
    .replace(/base_url: http:\/\/127\.0\.0\.1:4[12]00.*/, `base_url: ${vendorBaseUrl}`)
    .replace(/site_pack: .*/, `site_pack: ${resolve(sitePack)}`);
  const config = join(dir, 'paperclip.yaml');
  writeFileSync(config, text);
  return { dir, config, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A running `npx paperclip ...` whose stderr can be watched while it runs (a write that waits for an approval). */
export function paperclipLive(args: string[]): {
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  done: Promise<Finished>;
} {
  const child = spawn(process.execPath, ['bin/paperclip.js', ...args], {
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Finished>((resolveDone, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolveDone({ code, stdout, stderr }));
  });
  return {
    done,
    async stderrMatch(pattern, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = stderr.match(pattern);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline) {
          // Never leave it running: it holds the data folder the next command needs.
          child.kill();
          throw new Error(`stderr never matched ${pattern}:\n${stderr}`);
        }
        await sleep(200);
      }
    },
  };
}

/** The evidence objects a run stored under --data-dir (local S3 keeps each object as a file), by key. */
export function evidenceObjects(dataDir: string): Map<string, string> {
  const root = join(dataDir, 's3');
  const found = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('._S3rver_object')) found.set(relative(root, path).replace(/\._S3rver_object$/, ''), path);
    }
  };
  walk(root);
  return found;
}

/**
 * A back office running in this process and a config pointed at it, for a file whose tests run `npx paperclip`
 * against it: `dir` holds the config, `dataDir` is the data folder the commands share.
 */
export interface CliBackOffice<Control> {
  url: string;
  control: Control;
  dir: string;
  config: string;
  dataDir: string;
}

type SimulatorStart = NonNullable<Parameters<typeof startSimulator>[0]> & { controlToken: string };
type LedgerlyStart = NonNullable<Parameters<typeof startLedgerly>[0]> & { controlToken: string };

/** The simulator and its config for the whole test file: started before its first test, closed after its last. */
export function useSimulatorForCli(options: SimulatorStart): CliBackOffice<SimulatorControl> {
  return useBackOfficeForCli(
    () => startSimulator(options),
    (url) => new SimulatorControl(url, options.controlToken),
  );
}

/** Ledgerly and its config (sitepacks/ledgerly.yaml) for the whole test file, as useSimulatorForCli. */
export function useLedgerlyForCli(options: LedgerlyStart): CliBackOffice<LedgerlyControl> {
  const control = (url: string) => new LedgerlyControl(url, options.controlToken);
  return useBackOfficeForCli(() => startLedgerly(options), control, 'sitepacks/ledgerly.yaml', 'config/ledgerly.local.yaml');
}

function useBackOfficeForCli<Control>(
  start: () => Promise<{ url: string; close(): Promise<void> }>,
  controlFor: (url: string) => Control,
  sitePack?: string,
  configFile?: string,
): CliBackOffice<Control> {
  return useFixture(
    async () => {
      const backOffice = await start();
      const setup = configFor(backOffice.url, sitePack, configFile);
      return {
        url: backOffice.url,
        control: controlFor(backOffice.url),
        dir: setup.dir,
        config: setup.config,
        dataDir: join(setup.dir, 'data'),
        async stop() {
          await backOffice.close();
          setup.remove();
        },
      };
    },
    { stop: (started) => started.stop() },
  );
}

/** `npx paperclip run` with the file's config and data folder for one tenant, plus the test's own flags. */
export function paperclipRun(cli: { config: string; dataDir: string }, tenant: string, ...flags: string[]): Promise<Finished> {
  return paperclip(['run', '--config', cli.config, '--tenant', tenant, '--data-dir', cli.dataDir, ...flags]);
}

/**
 * `paperclip run --task <task> --json-lines` for one tenant, which must exit 0: its item lines as they settled,
 * and its summary line (the last).
 */
export async function runWithJsonLines(
  cli: { config: string; dataDir: string },
  tenant: string,
  task: string,
): Promise<{ run: Finished; items: Array<Record<string, unknown>>; summary: Record<string, unknown> }> {
  const run = await paperclipRun(cli, tenant, '--task', task, '--json-lines');
  assert.equal(run.code, 0, run.stderr);
  const lines = jsonLines(run.stdout);
  return { run, items: lines.slice(0, -1), summary: lines.at(-1)! };
}
