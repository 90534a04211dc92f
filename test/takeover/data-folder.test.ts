import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFolderError, runningStack, startEmbeddedSession, type EmbeddedSession } from '../../src/cli/data-folder.js';
import { runTakeover } from '../../src/cli/takeover.js';
import { closeSharedBrowser } from '../../src/browser/chromium.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

/**
 * One process owns a data folder's LevelDB at a time. A stack started on a
 * folder records itself there; a takeover command finds it and works through
 * its endpoints instead of starting a second stack on a locked folder.
 */
describe('data folder sessions', () => {
  let dir: string;
  let session: EmbeddedSession;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paperclip-folder-'));
    session = await startEmbeddedSession({ dataDir: dir, vendorBaseUrl: 'http://127.0.0.1:9' });
  });
  after(async () => {
    await session?.close();
    await closeSharedBrowser();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the running stack is recorded in the folder', () => {
    const owner = runningStack(dir);
    assert.equal(owner?.pid, process.pid);
    assert.equal(owner?.endpoints.dynamodb, session.paperclip.stack.endpoints.dynamodb);
  });

  test('a second stack on the same folder is refused with the reason', async () => {
    await assert.rejects(startEmbeddedSession({ dataDir: dir, vendorBaseUrl: 'http://127.0.0.1:9' }), (error: unknown) => {
      return error instanceof DataFolderError && /in use by a running Paperclip \(pid \d+/.test(error.message);
    });
  });

  test('paperclip takeover attaches to the running stack', async () => {
    const lines: string[] = [];
    const code = await runTakeover(['list', '--data-dir', dir], { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) });
    assert.equal(code, 0, lines.join('\n'));
    assert.ok(lines.includes(`ERR using the running Paperclip on ${dir}`), lines.join('\n'));
    assert.ok(lines.includes('no open takeover items'));
  });

  test('a missing folder is a clear error', async () => {
    const lines: string[] = [];
    const code = await runTakeover(['list', '--data-dir', join(dir, 'nope')], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    assert.equal(code, 2);
    assert.match(lines.join('\n'), /there is no data folder at .*nope/);
  });

  test('closing removes the record', async () => {
    await session.close();
    assert.equal(existsSync(join(dir, 'stack.json')), false);
    assert.equal(runningStack(dir), undefined);
  });
});
