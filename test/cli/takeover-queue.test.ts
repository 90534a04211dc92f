import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSession } from '../../src/cli/data-folder.js';
import { runTakeover } from '../../src/cli/takeover.js';
import { closeSharedBrowser } from '../../src/browser/chromium.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

/**
 * `takeover list` and `show` on a data folder that holds an open takeover, given a config that does not read that
 * folder's tables: they list the item or refuse naming why (exit 2), never an empty queue that is not empty.
 */
describe('takeover list never prints an empty queue that is not empty', () => {
  let dir: string;
  let config: string;
  let other: string;
  const key = `k-acme_${'a'.repeat(32)}`;
  const sample = readFileSync('config/paperclip.local.yaml', 'utf8');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paperclip-queue-'));
    config = join(dir, 'acme.yaml');
    other = join(dir, 'other.yaml');
    copyFileSync('config/paperclip.local.yaml', config);
    writeFileSync(
      other,
      sample.replace(/^prefix: .*/m, 'prefix: elsewhere').replace(/^(\s+bucket:) paperclip-evidence$/m, '$1 elsewhere-evidence'),
    );
    const session = await startEmbeddedSession({ dataDir: join(dir, 'data'), configPath: config, vendorBaseUrl: 'http://127.0.0.1:9' });
    try {
      await session.services.takeovers.open({
        key,
        taskId: 'T-queue',
        tenant: 'acme',
        billNo: 'ACME-202611-0001',
        action: 'mark_processed',
        identity: 'svc-recon-acme',
        reason: 'false success: the write reported success but list still shows PENDING',
        errorName: null,
        tier: 'browser',
        stage: 'readback',
        degraded: false,
        evidence: [],
        evidenceBucket: session.services.evidence.bucket,
        executionArn: 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:x',
        claimVersion: 1,
      });
    } finally {
      await session.close();
    }
  });
  after(async () => {
    await closeSharedBrowser();
    rmSync(dir, { recursive: true, force: true });
  });

  async function takeover(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runTakeover([...argv, '--data-dir', join(dir, 'data')], { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  test('with the folder’s own config, the item is listed', async () => {
    const listed = await takeover('list');
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, new RegExp(`${key} +OPEN`));
  });

  test('the recorded config edited to other tables since: refused naming both prefixes, not an empty queue', async () => {
    writeFileSync(config, sample.replace(/^prefix: .*/m, 'prefix: renamed'));
    try {
      const listed = await takeover('list');
      assert.equal(listed.code, 2, listed.out);
      assert.match(listed.err, /now names prefix "renamed" .* instead of the folder's prefix "paperclip-local"/);
      assert.doesNotMatch(listed.out, /no open takeover items/);
    } finally {
      copyFileSync('config/paperclip.local.yaml', config);
    }
  });

  test('a folder with no record of its config, read with another config: list and show refuse naming the prefix that holds the item', async () => {
    rmSync(join(dir, 'data', 'folder.json'));
    const listed = await takeover('list', '--config', other);
    assert.equal(listed.code, 2, listed.out);
    assert.match(
      listed.err,
      /reads prefix "elsewhere", which holds no takeover items .* under prefix "paperclip-local" \(1 open, 1 in all\)/,
    );
    assert.doesNotMatch(listed.out, /no open takeover items/);
    const json = await takeover('list', '--json', '--config', other);
    assert.equal(json.code, 2, 'an empty JSON list is an empty queue too');
    const shown = await takeover('show', key, '--config', other);
    assert.equal(shown.code, 2);
    assert.match(shown.err, /under prefix "paperclip-local"/);
    // With the right config the same folder lists it.
    const right = await takeover('list', '--config', config);
    assert.equal(right.code, 0, right.err);
    assert.match(right.out, new RegExp(key));
  });
});
