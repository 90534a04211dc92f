import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { checkConfigAgainstPack, loadRuntime } from '../../src/config/runtime.js';
import { parseOrThrow, ValidationError } from '../../src/config/errors.js';
import { SitePack } from '../../src/sitepack/schema.js';
import { browserStepBudget, MAX_SLOT_WAIT_SECONDS, MAX_UNDO_WINDOW_SECONDS, sizingOf } from '../../src/contracts/sizing.js';

const sample = () => parse(readFileSync('config/paperclip.local.yaml', 'utf8')) as Record<string, any>;
const invalid = (mutate: (c: Record<string, any>) => void): ValidationError => {
  const config = sample();
  mutate(config);
  try {
    parseConfig(stringify(config), 'test.yaml');
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error;
  }
  assert.fail('the config was accepted');
};

test('the sample config and the simulator site pack load and agree', () => {
  const { config, sitePack } = loadRuntime('config/paperclip.local.yaml');
  assert.equal(config.tenants[0]?.id, 'acme');
  assert.ok(sitePack.actions['mark_processed']);
});

test('errors name the field and say how to fix it', () => {
  assert.match(
    invalid((c) => (c.tenants[0].identity = 'svc-recon-globex')).message,
    /tenants\.0\.identity: identity "svc-recon-globex" is not scoped for tenant "acme"/,
  );
  assert.match(invalid((c) => (c.write_policy.require_readback = false)).message, /write_policy\.require_readback: .*false success/);
  assert.match(invalid((c) => (c.write_policy.forbid_visual_verdict = false)).message, /forbid_visual_verdict/);
  assert.match(invalid((c) => (c.evidence.bucket = 'Not_A_Bucket')).message, /evidence\.bucket: S3 bucket names/);
  assert.match(invalid((c) => (c.tool_ladder = ['api', 'telepathy'])).message, /tool_ladder\.1/);
  assert.match(invalid((c) => (c.surprise = true)).message, /surprise|Unrecognized/);
  assert.match(
    invalid((c) => (c.environment = 'aws')).message,
    /identities\.0\.credentials\.source: inline credentials are for the local stack only/,
  );
  assert.match(invalid((c) => delete c.evidence.bucket).message, /evidence\.bucket: is required: add bucket \(expected string/);
});

test('a site pack without login.probeUrl names it as required', () => {
  const pack = parse(readFileSync('sitepacks/vendor-sim.yaml', 'utf8')) as Record<string, any>;
  delete pack.login.probeUrl;
  assert.throws(() => parseOrThrow(SitePack, pack, 'pack.yaml'), /login\.probeUrl: is required: add probeUrl/);
});

test('not YAML at all is a clear error', () => {
  assert.throws(() => parseConfig('tenants: [unclosed', 'broken.yaml'), /broken\.yaml is invalid:[\s\S]*not valid YAML/);
});

test('an irreversible action must be approved or exempted with a reason', () => {
  const { config, sitePack } = loadRuntime('config/paperclip.local.yaml');
  config.write_policy.approval_required = [];
  assert.throws(
    () => checkConfigAgainstPack(config, sitePack, 'cfg'),
    /"refund" is irreversible in the site pack: add it to approval_required/,
  );
  config.write_policy.approval_required = ['refund'];
  config.actions['teleport'] = { retry_after_negative_readback: false, max_write_attempts: 1 };
  assert.throws(
    () => checkConfigAgainstPack(config, sitePack, 'cfg'),
    /actions\.teleport: site pack "vendor-sim" has no action "teleport"/,
  );
});

test('vendor_sessions.max_per_identity defaults to 2 and a bad value is refused naming the field', () => {
  assert.deepEqual(parseConfig(stringify(sample()), 'test.yaml').vendor_sessions, {
    max_per_identity: 2,
    wait_seconds: 20,
    lease_seconds: 60,
  });
  assert.match(
    invalid((c) => (c.vendor_sessions = { max_per_identity: 0 })).message,
    /vendor_sessions\.max_per_identity: vendor_sessions\.max_per_identity must be at least 1/,
  );
  assert.match(
    invalid((c) => (c.vendor_sessions = { max_per_identity: 'two' })).message,
    /vendor_sessions\.max_per_identity: .*whole number/,
  );
  assert.match(
    invalid((c) => (c.vendor_sessions = { max_per_identity: 1.5 })).message,
    /vendor_sessions\.max_per_identity: .*whole number/,
  );
});

test('a slot wait and undo windows that cannot finish inside the browser-write timeout are refused, naming the field and the fix', () => {
  const { config, sitePack } = loadRuntime('config/paperclip.local.yaml');
  const write = sitePack.actions['mark_processed']!;
  const steps = write.tiers.browser!.steps!;
  // Six stages, each sitting out a 60 s undo window after its commit click, behind a 120 s slot wait: each value is
  // within its own schema's maximum, but together they outlast the function the write runs in.
  write.undoWindowSeconds = 60;
  write.tiers.browser = { stages: [1, 2, 3, 4, 5, 6].map((n) => ({ name: `part${n}`, steps })) };
  config.vendor_sessions.wait_seconds = 120;
  const timeout = sizingOf('browser-write').timeoutSeconds;
  assert.throws(
    () => checkConfigAgainstPack(config, sitePack, 'cfg'),
    (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.match(
        error.message,
        new RegExp(
          `vendor_sessions\\.wait_seconds: action "mark_processed" of site pack "vendor-sim" cannot finish ` +
            `inside the browser-write function's ${timeout} s timeout`,
        ),
      );
      assert.match(error.message, /the slot wait 120 s \+ 6 stage\(s\) × undoWindowSeconds 60 s/);
      assert.match(
        error.message,
        /lower vendor_sessions\.wait_seconds to at most \d+, or lower the site pack's actions\.mark_processed\.undoWindowSeconds to at most \d+/,
      );
      return true;
    },
  );
  // The fix the message names is enough: the same pack with the shorter slot wait it asks for loads.
  const refusal = (() => {
    try {
      checkConfigAgainstPack(config, sitePack, 'cfg');
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  })();
  const most = Number(/wait_seconds to at most (\d+)/.exec(refusal)![1]);
  config.vendor_sessions.wait_seconds = most;
  assert.doesNotThrow(() => checkConfigAgainstPack(config, sitePack, 'cfg'));
  // Five such stages fit the timeout sized for the declared maxima (one 60 s window, a 120 s wait) no matter the wait.
  config.vendor_sessions.wait_seconds = 120;
  write.tiers.browser = { stages: [1, 2, 3, 4, 5].map((n) => ({ name: `part${n}`, steps })) };
  assert.doesNotThrow(() => checkConfigAgainstPack(config, sitePack, 'cfg'));
  // The deployed timeout covers the maxima each schema allows: the largest slot wait with one largest undo window.
  assert.ok(
    browserStepBudget('browser-write', { slotWaitSeconds: MAX_SLOT_WAIT_SECONDS, undoWindowSeconds: MAX_UNDO_WINDOW_SECONDS, stages: 1 })
      .fits,
  );
  for (const name of ['read-list', 'snapshot', 'readback'])
    assert.ok(browserStepBudget(name, { slotWaitSeconds: MAX_SLOT_WAIT_SECONDS, undoWindowSeconds: 0, stages: 1 }).fits, name);
});
