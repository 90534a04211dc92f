import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { printedUrl } from '../../support/processes.js';

const CLI = ['--import', 'tsx', 'backoffices/simulator/cli.ts'];

function runToExit(args: string[]) {
  return spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
}

test('unknown flags and bad values are clear errors with exit code 2', () => {
  const unknown = runToExit(['--prot', '4100']);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /Unknown option '--prot'/);
  assert.match(unknown.stderr, /Usage: npm run sim/);

  const badPort = runToExit(['--port', 'http']);
  assert.equal(badPort.status, 2);
  assert.match(badPort.stderr, /--port must be a whole number/);

  const badTenants = runToExit(['--tenants', 'acme,Globex']);
  assert.equal(badTenants.status, 2);
  assert.match(badTenants.stderr, /--tenants takes lowercase letters only/);
});

test('starts, prints the URL and accounts, serves the login page, stops on SIGINT', async () => {
  const child = spawn(process.execPath, [...CLI, '--port', '0', '--seed', '7', '--control-token', 'T', '--async-delay-ms', '50'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { url, out } = await printedUrl(child);
  try {
    assert.match(out, /svc-recon-acme\s+pw-acme-2026\s+tok-acme\s+acme/);
    assert.match(out, /ops-shared\s+pw-ops-2026\s+tok-ops\s+all tenants/);
    const login = await fetch(`${url}/login`);
    assert.equal(login.status, 200);
    assert.match(await login.text(), /<title>登录 - 供应商对账后台<\/title>/);
    const state = await fetch(`${url}/__sim/state`, { headers: { 'x-sim-token': 'T' } });
    assert.equal(state.status, 200);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    assert.equal(await exited, 0);
  }
});
