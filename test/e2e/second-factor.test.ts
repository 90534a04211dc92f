import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { totpCode } from '../../src/browser/second-factor.js';
import { readZip } from '../../src/lib/zip.js';
import { totpSecretFor } from '../../backoffices/simulator/server.js';
import { startHarness, type Harness } from '../support/embedded.js';

/**
 * A vendor login that asks a TOTP code after the password (the simulator's secondFactor tenant option), through
 * the real workflow: the pack's login.secondFactor and the identity's totp_secret get a batch in, logging in once
 * per session purpose; a wrong secret fails naming the second-factor step with nothing written; no code and no
 * secret reaches the evidence.
 */
const PERIOD = 5;
const FACTOR = { period: PERIOD, digits: 6, algorithm: 'SHA1' } as const;
const WRONG_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

function configWithSecondFactor(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'paperclip-2fa-'));
  const pack = parseYaml(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as { login: Record<string, unknown> };
  pack.login['secondFactor'] = {
    field: { label: '动态验证码' },
    submit: { role: 'button', name: '验证' },
    rejected: ['动态验证码错误'],
    period: PERIOD,
  };
  writeFileSync(join(dir, 'vendor-sim-2fa.yaml'), stringifyYaml(pack));
  const config = parseYaml(readFileSync('config/paperclip.local.yaml', 'utf8')) as {
    vendor: { site_pack: string };
    identities: Array<{ id: string; credentials: Record<string, unknown> }>;
  };
  config.vendor.site_pack = join(dir, 'vendor-sim-2fa.yaml');
  for (const identity of config.identities) {
    if (identity.id === 'svc-recon-acme') identity.credentials['totp_secret'] = totpSecretFor('acme');
    if (identity.id === 'svc-recon-globex') identity.credentials['totp_secret'] = WRONG_SECRET;
  }
  const path = join(dir, 'paperclip.yaml');
  writeFileSync(path, stringifyYaml(config));
  return { path: resolve(path), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('login with a second factor (TOTP) on the embedded stack', () => {
  const config = configWithSecondFactor();
  let h: Harness;
  before(async () => {
    h = await startHarness({ configPath: config.path });
    await h.control.reset({
      seed: 5,
      tenants: [
        { id: 'acme', pending: 4, overcharge: 0, processed: 0, secondFactor: { periodSeconds: PERIOD } },
        { id: 'globex', pending: 1, overcharge: 0, processed: 0, secondFactor: { periodSeconds: PERIOD } },
      ],
    });
  });
  after(async () => {
    await h?.stop();
    config.remove();
  });

  test('a batch logs in with the code, once per session purpose, and the journal shows every write', async () => {
    const started = Date.now();
    const run = await h.paperclip.runBatch({ taskId: 'T-2fa', tenant: 'acme' });
    const finished = Date.now();
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.counts.done, 4);
    const marks = (await h.control.journal()).filter((e) => e.action === 'mark' && e.tenant === 'acme');
    assert.equal(marks.length, 4);
    assert.ok(marks.every((e) => e.identity === 'svc-recon-acme'));

    const codeLogins = (await h.control.timings()).filter(
      (t) => t.method === 'POST' && t.path.startsWith('/login/2fa') && t.status === 302,
    );
    // The list read and the writes share one login, readbacks log in on their own: never one login per item.
    assert.ok(codeLogins.length >= 1 && codeLogins.length <= 2, `${codeLogins.length} second-factor logins for 4 items`);

    // Nothing a code or the secret could be read from: every evidence object of the batch, trace archives unpacked.
    const secret = totpSecretFor('acme');
    const codes = new Set<string>();
    for (let at = started - 2 * PERIOD * 1000; at <= finished + 2 * PERIOD * 1000; at += 1000) codes.add(totpCode(secret, FACTOR, at));
    const claims = await h.paperclip.services.claims.byTask('T-2fa');
    assert.equal(claims.length, 4);
    let traces = 0;
    for (const claim of claims) {
      for (const key of await h.paperclip.services.evidence.list(evidenceKey(claim, ''))) {
        const body = (await h.paperclip.services.evidence.get(key))!;
        const texts = key.endsWith('.zip') ? [...readZip(body).values()].map((b) => b.toString('latin1')) : [body.toString('latin1')];
        if (key.endsWith('trace.zip')) traces += 1;
        for (const text of texts) {
          assert.ok(!text.includes(secret), `${key} holds the TOTP secret`);
          assert.ok(!text.includes('/login/2fa'), `${key} holds the second-factor page`);
          for (const code of codes) assert.doesNotMatch(text, new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`), `${key} holds a code`);
        }
      }
    }
    assert.ok(traces >= 4, 'the traces were searched');
  });

  test('a wrong TOTP secret: the login fails naming the second-factor step, nothing is written', async () => {
    const result = await h.runTask({ taskId: 'T-2fa-wrong', tenant: 'globex', billNo: 'GLOBEX-202611-0001', action: 'mark_processed' });
    const told = JSON.stringify(result.output);
    assert.match(told, /login\.secondFactor/);
    assert.match(told, /refused for two consecutive TOTP windows/);
    assert.doesNotMatch(told, /check the identity's credentials/);
    assert.doesNotMatch(told, new RegExp(WRONG_SECRET));
    assert.notEqual(result.output['outcome'], 'done');
    assert.deepEqual(
      (await h.control.journal()).filter((e) => e.tenant === 'globex'),
      [],
    );
    const codeTries = (await h.control.timings()).filter((t) => t.method === 'POST' && t.path.startsWith('/login/2fa') && t.status === 401);
    assert.ok(codeTries.length >= 2, 'one code, then the next window');
  });
});
