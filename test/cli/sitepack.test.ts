import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCheck } from '../../src/cli/sitepack.js';
import { startLedgerly, type RunningLedgerly } from '../../backoffices/ledgerly/server.js';
import { LedgerlyControl } from '../../backoffices/ledgerly/control-client.js';
import { configFor, paperclip, useSimulatorForCli } from './helpers.js';

/** Runs `sitepack check` in-process (it opens no browser) and collects what it prints. */
async function check(...argv: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runCheck(argv, (line) => lines.push(line));
  return { code, text: lines.join('\n') };
}

describe('paperclip sitepack check', () => {
  let setup: ReturnType<typeof configFor>;
  before(() => {
    setup = configFor('http://127.0.0.1:9');
  });
  after(() => setup.remove());

  test('the bundled pack and config are valid', async () => {
    const result = await check('sitepacks/vendor-sim.yaml', '--config', 'config/paperclip.local.yaml');
    assert.equal(result.code, 0, result.text);
    assert.match(result.text, /sitepacks\/vendor-sim\.yaml: valid \(site vendor-sim/);
    assert.match(result.text, /config\/paperclip\.local\.yaml: valid against vendor-sim \(tenants acme, globex, initech\)/);
  });

  test('a bad pack: each problem names the field path and the fix', async () => {
    const pack = join(setup.dir, 'bad-pack.yaml');
    writeFileSync(
      pack,
      readFileSync('sitepacks/vendor-sim.yaml', 'utf8')
        .replace("itemKeyPattern: '^[A-Z]+-\\d{6}-\\d{4}$'", "itemKeyPattern: '[A-Z]+'")
        .replace('inverse: unmark_processed', 'inverse: unmark'),
    );
    const result = await check(pack);
    assert.equal(result.code, 1);
    assert.match(result.text, /itemKeyPattern: must be a valid regular expression anchored with \^ and \$/);
    assert.match(result.text, /actions\.mark_processed\.inverse: names "unmark", which is not an action of this site pack/);

    writeFileSync(pack, readFileSync('sitepacks/vendor-sim.yaml', 'utf8').replace('targetStatus: REFUNDED', 'targetStatus: REFUND_DONE'));
    const unreadable = await check(pack);
    assert.equal(unreadable.code, 1);
    assert.match(
      unreadable.text,
      /actions\.refund\.targetStatus: status REFUND_DONE is in no status map: map the text the vendor shows for it under statuses/,
    );
  });

  test('a config against a pack: readback sources, actions and parameters the pack does not offer', async () => {
    const config = join(setup.dir, 'bad-config.yaml');
    writeFileSync(
      config,
      readFileSync(setup.config, 'utf8')
        .replace('refund: { reason: 重复扣款退款 }', 'refund: { reason: 重复扣款退款, currency: CNY }')
        .replace('mismatch: mark_processed, overcharge: refund }', 'mismatch: mark_processed, overcharge: refund_all }'),
    );
    const pack = join(setup.dir, 'no-export.yaml');
    writeFileSync(pack, readFileSync('sitepacks/vendor-sim.yaml', 'utf8').replace(/\nexport:\n(?: {2}.*\n)+/, '\n'));
    const result = await check(pack, '--config', config);
    assert.equal(result.code, 1, result.text);
    assert.match(result.text, /no-export\.yaml: valid/);
    assert.match(
      result.text,
      /write_policy\.readback_sources\.2: site pack "vendor-sim" has no export source; describe it in the pack or drop it here/,
    );
    assert.match(
      result.text,
      /tenants\.0\.action_params\.refund\.currency: action "refund" takes no parameter "currency" \(it takes: amount, reason\)/,
    );
    assert.match(result.text, /tenants\.0\.actions_by_kind\.overcharge: action "refund_all" is not enabled under actions/);
  });

  test('a missing file and a bad flag', async () => {
    const missing = await check('sitepacks/nope.yaml');
    assert.equal(missing.code, 1);
    assert.match(missing.text, /sitepacks\/nope\.yaml is invalid:\n {2}- \(root\): no such file/);
    await assert.rejects(check('sitepacks/vendor-sim.yaml', '--conifg', 'x'), /unknown flag --conifg; did you mean --config\?/);
    await assert.rejects(check(), /expected <pack>, got none/);
  });
});

/**
 * The probe on the live simulator, in a child process as an engineer runs it:
 * it reads everything there is to read and the vendor's journal stays empty.
 */
describe('paperclip sitepack probe', () => {
  const cli = useSimulatorForCli({
    controlToken: 'cli-probe-test',
    tenants: [{ id: 'acme', pending: 2, overcharge: 1, processed: 1 }],
    pageSize: 2,
  });

  test('prints every row over all pages, what a batch would do, the state per source and the session-loss checks; writes nothing', async () => {
    const out = join(cli.dir, 'probe');
    const journalBefore = await cli.control.journal();
    const run = await paperclip(['sitepack', 'probe', '--config', cli.config, '--tenant', 'acme', '--out', out]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const text = run.stdout;
    assert.match(text, /list +4 row\(s\)/, 'all two pages read');
    assert.match(text, /ACME-202611-0001 +PENDING +mismatch +amount=¥[\d,.]+ owner=acme +mark_processed/);
    assert.match(text, /ACME-202611-0003 +PENDING +overcharge +amount=¥[\d,.]+ owner=acme +refund/);
    assert.match(
      text,
      /ACME-202611-0004 +PROCESSED +mismatch +amount=¥[\d,.]+ owner=acme +none: kind mismatch -> mark_processed, but mark_processed applies to PENDING, not PROCESSED/,
    );
    assert.match(text, /item ACME-202611-0001 through every readback source/);
    for (const source of ['list', 'detail', 'export', 'api']) assert.match(text, new RegExp(`\\n {2}${source} +PENDING`));
    assert.match(text, /agree: PENDING/);
    assert.match(text, /ok +logged-in page: no session-loss signal/);
    assert.match(text, /ok +logged-out visit: \/diff\/list without a session is detected/);
    for (const file of ['list.png', 'list-trace.zip', 'readback-detail.png', 'readback-trace.zip', 'logged-out.png', 'probe.json'])
      assert.ok(existsSync(join(out, file)), file);
    const saved = JSON.parse(readFileSync(join(out, 'probe.json'), 'utf8'));
    assert.equal(saved.ok, true);
    assert.equal(saved.rows.length, 4);
    assert.deepEqual(await cli.control.journal(), journalBefore, 'the vendor journal is unchanged');
    assert.deepEqual(journalBefore, []);
  });

  test('on Ledgerly (cards, Load more, status as text, a cookie API signed in by api.login): rows, states per source and session checks; writes nothing', async () => {
    const ledgerly: RunningLedgerly = await startLedgerly({
      controlToken: 'cli-probe-ledgerly',
      pageSize: 2,
      orgs: [{ id: 'acme', billingErrors: 2, duplicateCharges: 1, resolved: 1, refunded: 0 }],
    });
    const ledgerlyControl = new LedgerlyControl(ledgerly.url, 'cli-probe-ledgerly');
    const ledgerlySetup = configFor(ledgerly.url, 'sitepacks/ledgerly.yaml', 'config/ledgerly.local.yaml');
    try {
      const journalBefore = await ledgerlyControl.journal();
      const run = await paperclip([
        'sitepack',
        'probe',
        '--config',
        ledgerlySetup.config,
        '--tenant',
        'acme',
        '--out',
        join(ledgerlySetup.dir, 'probe'),
      ]);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      const text = run.stdout;
      assert.match(text, /list +4 row\(s\)/, 'both Load more pages read');
      assert.match(text, /N-7001 +OPEN +billing_error +.*amount=[\d,.]+.* +resolve/);
      assert.match(text, /N-7003 +OPEN +duplicate_charge +.* +refund/);
      assert.match(text, /N-7004 +RESOLVED +billing_error +.* +none: /);
      assert.match(text, /item N-7001 through every readback source/);
      for (const source of ['list', 'detail', 'export', 'api']) assert.match(text, new RegExp(`\\n {2}${source} +OPEN`));
      assert.match(text, /agree: OPEN/);
      assert.match(text, /ok +logged-in page: no session-loss signal on \/#\/\S+/, 'a hash route is named with its hash, not as "/"');
      assert.match(text, /ok +logged-out visit: /);
      assert.deepEqual(await ledgerlyControl.journal(), journalBefore, 'the vendor journal is unchanged');
      assert.deepEqual(journalBefore, []);
    } finally {
      await ledgerly.close();
      ledgerlySetup.remove();
    }
  });

  test('an item key the pack would refuse: exit 2 naming --item, before any browser', async () => {
    const run = await paperclip(['sitepack', 'probe', '--config', cli.config, '--tenant', 'acme', '--item', 'acme 1']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--item: "acme 1" is not an item key of vendor-sim/);
  });
});
