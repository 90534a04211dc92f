import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { parseSitePack } from '../../src/sitepack/load.js';
import { parseConfig } from '../../src/config/load.js';
import { msToNextWindow, totpCode } from '../../src/browser/second-factor.js';
import { codeAccepted } from '../../backoffices/simulator/second-factor.js';
import { totpSecretFor } from '../../backoffices/simulator/server.js';

const pack = () => parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as Record<string, any>;
const config = () => parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as Record<string, any>;
const factor = { field: { label: '动态验证码' }, submit: { role: 'button', name: '验证' }, rejected: ['动态验证码错误'] };

test('login.secondFactor: validated with defaults, and a missing or bad field is named with its fix', () => {
  const p = pack();
  p.login.secondFactor = factor;
  const loaded = parseSitePack(stringify(p), 'pack.yaml');
  assert.deepEqual(
    {
      period: loaded.login.secondFactor?.period,
      digits: loaded.login.secondFactor?.digits,
      algorithm: loaded.login.secondFactor?.algorithm,
    },
    { period: 30, digits: 6, algorithm: 'SHA1' },
  );
  p.login.secondFactor = { ...factor, rejected: [] };
  assert.throws(
    () => parseSitePack(stringify(p), 'pack.yaml'),
    /login\.secondFactor\.rejected: list the text\(s\) the vendor shows for a wrong code/,
  );
  p.login.secondFactor = { ...factor, digits: 4 };
  assert.throws(() => parseSitePack(stringify(p), 'pack.yaml'), /login\.secondFactor\.digits: digits is 6, 7 or 8/);
  p.login.secondFactor = { ...factor, field: { css: '#code' } };
  assert.throws(() => parseSitePack(stringify(p), 'pack.yaml'), /login\.secondFactor\.field/);
});

test('credentials.totp_secret: base32 (grouped with spaces is fine), never a code', () => {
  const c = config();
  c.identities[0].credentials.totp_secret = 'jbsw y3dp ehpk 3pxp';
  const parsed = parseConfig(stringify(c), 'paperclip.yaml');
  const credentials = parsed.identities[0]!.credentials;
  assert.equal(credentials.source === 'inline' && credentials.totp_secret, 'JBSWY3DPEHPK3PXP');
  c.identities[0].credentials.totp_secret = '123456';
  assert.throws(
    () => parseConfig(stringify(c), 'paperclip.yaml'),
    /identities\.0\.credentials\.totp_secret: totp_secret is the base32 secret/,
  );
});

test('codes are the RFC 6238 ones, and the simulator accepts exactly the current window and its neighbours', () => {
  // RFC 6238 appendix B, SHA1, 8 digits, at 59 s: 94287082 (secret "12345678901234567890" in base32).
  const rfcSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  assert.equal(totpCode(rfcSecret, { period: 30, digits: 8, algorithm: 'SHA1' }, 59_000), '94287082');
  assert.equal(msToNextWindow(30, 59_000), 1_000);
  const secret = totpSecretFor('acme');
  const now = 1_700_000_000_000;
  const at = (offset: number) => totpCode(secret, { period: 30, digits: 6, algorithm: 'SHA1' }, now + offset * 30_000);
  assert.ok(codeAccepted(secret, 30, at(0), now));
  assert.ok(codeAccepted(secret, 30, at(1), now));
  assert.ok(!codeAccepted(secret, 30, at(3), now));
  assert.ok(!codeAccepted(totpSecretFor('globex'), 30, at(0), now));
});
