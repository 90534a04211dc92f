import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { printedUrl } from '../../support/processes.js';
import { LedgerlyControl } from '../../../backoffices/ledgerly/control-client.js';

const CLI = ['--import', 'tsx', 'backoffices/ledgerly/cli.ts'];

test('bad flags are clear errors with exit code 2', () => {
  const bad = spawnSync(process.execPath, [...CLI, '--orgs', 'acme,Globex'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--orgs takes lowercase letters only/);
  assert.match(bad.stderr, /Usage: npm run sim:ledgerly/);
});

test('starts alone, prints the URL and users, serves the app and the control API, stops on SIGINT', async () => {
  const child = spawn(process.execPath, [...CLI, '--port', '0', '--control-token', 'T', '--orgs', 'acme,globex,initech'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { url, out } = await printedUrl(child);
  assert.match(out, /billing@initech\.test\s+Ledgerly-initech-2026\s+initech/);
  assert.match(out, /ops@ledgerly\.test\s+Ops-2026!\s+every org/);
  const shell = await (await fetch(`${url}/`)).text();
  assert.match(shell, /<div id="root"><\/div>/);
  assert.match(shell, /<script src="\/assets\/app\.[0-9a-f]{10}\.js"><\/script>/);
  const state = await new LedgerlyControl(url, 'T').state();
  assert.deepEqual([...new Set(state.discrepancies.map((d) => d.org))], ['acme', 'globex', 'initech']);
  assert.equal(state.discrepancies.find((d) => d.org === 'initech')?.id, 'N-9001');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
});
