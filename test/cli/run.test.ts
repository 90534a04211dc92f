import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../src/cli/args.js';
import { runRun } from '../../src/cli/run.js';
import { approvalRecipients } from '../../src/cli/batch-output.js';
import type { EmbeddedPaperclip } from '../../twin/runtime/embedded-paperclip.js';
import { idempotencyKey, KEY_PATTERN } from '../../src/domain/task.js';
import { openLink } from '../approvals/helpers.js';
import { readSesInbox } from '../../twin/aws/ses.js';
import {
  type CliBackOffice,
  evidenceObjects,
  lastJson,
  paperclip,
  paperclipLive,
  paperclipRun,
  useLedgerlyForCli,
  useSimulatorForCli,
} from './helpers.js';

/** Approves from the approval mail in a running CLI's local SES inbox, as the approver would. */
async function approveFromInbox(inbox: string): Promise<void> {
  // Without the token printed at start, the inbox shows nothing.
  assert.equal((await fetch(new URL('/store', inbox))).status, 401, 'the inbox needs its token');
  const link = (await readSesInbox(inbox)).map((m) => m.body.text?.match(/https?:\/\/\S+\/approvals\/\S+/)?.[0]).find(Boolean);
  assert.ok(link, 'the approval mail carries the link');
  const form = await openLink(link);
  const decided = await fetch(new URL(new URL(link).pathname, link), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(link).origin, cookie: form.cookie! },
    body: new URLSearchParams({ ...form.fields, decision: 'approve' }).toString(),
    redirect: 'manual',
  });
  assert.ok(decided.status < 400, await decided.text());
}

/**
 * A `paperclip run --item <billNo> --action refund` for acme that must wait for its approval: nothing refunded while
 * the mail waits, then approved from the mail, the run ends done and the vendor's journal shows one refund.
 */
async function refundsOnceAfterApproval(
  cli: CliBackOffice<{ journal(): Promise<Array<{ action: string; billNo: string }>> }>,
  billNo: string,
  ...flags: string[]
): Promise<void> {
  const control = cli.control;
  const run = paperclipLive(
    // A data folder of its own: the file's batch left its refund of this bill waiting for an approval, and while that
    // write is open no other task writes the bill (one open write per item, docs/guarded-write.md).
    [
      'run',
      '--config',
      cli.config,
      '--tenant',
      'acme',
      '--item',
      billNo,
      '--action',
      'refund',
      ...flags,
      '--data-dir',
      join(cli.dir, 'data-refund'),
    ],
  );
  await run.stderrMatch(/approval mailed to finance\.lead@acme\.example: open it in the inbox at \S+ \(the approval emails URL above\)/);
  const [, inbox] = await run.stderrMatch(/approval emails +(\S+\?token=\S+)/);
  const refunds = async () => (await control.journal()).filter((e) => e.action === 'refund').map((e) => e.billNo);
  assert.deepEqual(await refunds(), [], 'nothing refunded before the approval');
  await approveFromInbox(inbox!);
  const finished = await run.done;
  assert.equal(finished.code, 0, finished.stderr);
  assert.equal(lastJson(finished.stdout)['outcome'], 'done');
  assert.deepEqual(await refunds(), [billNo], 'refunded exactly once');
}

/**
 * `paperclip run --item` for acme on an item acme may not write: exit 1, outcome rejected, the vendor's journal
 * unchanged and the API asked. Returns the reason and the vendor requests the run made, for the test to say which.
 */
async function rejectedAtRouting(
  cli: CliBackOffice<{ journal(): Promise<unknown[]>; timings(): Promise<Array<{ method: string; path: string }>> }>,
  item: string,
  action: string,
): Promise<{ reason: string; requests: string[] }> {
  const journal = await cli.control.journal();
  const before = (await cli.control.timings()).length;
  const run = await paperclipRun(cli, 'acme', '--item', item, '--action', action);
  assert.equal(run.code, 1, run.stderr);
  const outcome = lastJson(run.stdout);
  assert.equal(outcome['outcome'], 'rejected');
  const requests = (await cli.control.timings()).slice(before).map((t) => `${t.method} ${t.path}`);
  assert.ok(requests.length > 0, 'the API was asked');
  assert.deepEqual(await cli.control.journal(), journal, 'nothing written');
  return { reason: String(outcome['reason']), requests };
}

/**
 * Who an approval went to, as `paperclip run` reports it: the request is stored before its mails are
 * sent, so a request found without its mail yet is a mail about to go out, not "no one was mailed".
 */
describe('approval mail of a waiting write', () => {
  test('a request whose mails are still being sent: waits for them, reports every approver', async () => {
    const approvers = ['finance.lead@acme.example', 'controller@acme.example'];
    const request = { approvalId: 'k-acme_approval-1', key: 'k-acme_1', billNo: 'ACME-202611-0003', allowedApprovers: approvers };
    const mail = (to: string) => ({
      destination: { to: [to] },
      body: { text: `Review and decide:\nhttp://127.0.0.1:4200/approvals/${request.approvalId}?sig=x\n` },
    });
    let inboxReads = 0;
    // The first two reads find no mail, the third the first approver's only: a mailer still sending.
    const inbox = () => (++inboxReads <= 2 ? [] : inboxReads === 3 ? [mail(approvers[0]!)] : approvers.map(mail));
    const paperclip = {
      services: {
        config: { write_policy: { approval_required: ['refund'] } },
        claims: { byTask: async () => [{ key: request.key, action: 'refund' }] },
        approvals: { byKey: async () => [request] },
      },
      stack: { fetchEmails: async () => inbox() },
    } as unknown as EmbeddedPaperclip;
    const recipients = await approvalRecipients(paperclip, { taskId: 'T-mail', tenant: 'acme' }, 1, 20_000);
    assert.deepEqual(
      recipients.map((r) => `${r.billNo} ${r.to}`),
      approvers.map((to) => `ACME-202611-0003 ${to}`),
    );
  });
});

/**
 * `paperclip run` against a back office it did not start: the simulator runs
 * here, Paperclip (embedded stack, Chromium) in a child process, as an engineer
 * runs it against a vendor. acme has 2 pending mismatches, 1 overcharge and 1
 * processed bill; the simulator knows no initech, whose login therefore fails.
 */
describe('paperclip run', () => {
  const cli = useSimulatorForCli({
    controlToken: 'cli-run-test',
    asyncDelayMs: 100,
    tenants: [
      { id: 'acme', pending: 2, overcharge: 1, processed: 1 },
      { id: 'globex', pending: 1, overcharge: 0, processed: 0 },
    ],
  });

  test('bad flags and a tenant or item the config does not allow: refused naming the flag, nothing started or written', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--tenant', 'acme'], /--config: is required; give --config <file>/],
      [['--config', cli.config, '--tenant', 'acme', '--dry'], /unknown flag --dry; did you mean --keep\?|unknown flag --dry/],
      [['--config', cli.config, '--tenant', 'umbrella'], /--tenant: "umbrella" is not a tenant of .*; its tenants: acme, globex, initech/],
      [['--config', cli.config, '--tenant', 'acme', '--item', 'ACME-202611-0001'], /--action: is required with --item/],
      [
        ['--config', cli.config, '--tenant', 'acme', '--fail-on', 'takeover,lost'],
        /--fail-on: "lost" is not outcome or outcome:N; outcomes are done, /,
      ],
      [['--config', cli.config, '--tenant', 'acme', '--fail-on', 'takeover:0'], /--fail-on: "takeover:0": N counts items and starts at 1/],
      [
        ['--config', cli.config, '--tenant', 'acme', '--item', 'acme-1', '--action', 'mark_processed'],
        /--item: billNo "acme-1" is not a bill number of vendor-sim/,
      ],
      [
        ['--config', cli.config, '--tenant', 'acme', '--item', 'ACME-202611-0003', '--action', 'refund'],
        /--param: task\.params\.amount: action "refund" needs amount/,
      ],
      [
        ['--config', cli.config, '--tenant', 'acme', '--item', 'ACME-202611-0001', '--action', 'mark_processed', '--param', 'x'],
        /--param: "x" is not name=value/,
      ],
    ];
    // In-process: these are refused before anything starts (main.ts turns the UsageError into exit code 2, see args.test.ts).
    for (const [args, message] of cases) {
      await assert.rejects(
        runRun([...args, '--data-dir', cli.dataDir]),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        args.join(' '),
      );
    }
    assert.equal(existsSync(cli.dataDir), false, 'no data folder was created');
    assert.deepEqual(await cli.control.journal(), [], 'the vendor saw no write');
  });

  test('a batch against the running back office: progress on stderr, one summary line, one mutation per pending item; --fail-on exits 3', async () => {
    const run = await paperclipRun(cli, 'acme', '--task', 'T-cli-run-acme', '--fail-on', 'takeover,awaiting_approval');
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /exit 3: --fail-on awaiting_approval 1 ≥ 1 \(the batch itself succeeded\)/);
    assert.equal(run.stdout.trim().split('\n').length, 1, 'stdout is the summary line alone');
    const summary = lastJson(run.stdout);
    assert.deepEqual(
      {
        task: summary['task'],
        read: summary['read'],
        done: summary['done'],
        awaiting: summary['awaiting_approval'],
        error: summary['error'],
      },
      { task: 'T-cli-run-acme', read: 4, done: 2, awaiting: 1, error: 0 },
    );
    assert.match(run.stderr, new RegExp(`vendor +${cli.url.replace(/[.]/g, '\\.')}`));
    assert.match(run.stderr, /batch succeeded/);
    assert.match(run.stderr, /ACME-202611-0003 → finance\.lead@acme\.example \(open the mail/);
    assert.doesNotMatch(run.stderr, /\/approvals\/|pw-acme-2026/, 'no approval link or vendor password on the terminal');
    const journal = await cli.control.journal();
    assert.deepEqual(journal.map((e) => `${e.billNo} ${e.action}`).sort(), ['ACME-202611-0001 mark', 'ACME-202611-0002 mark']);
  });

  test('from the data folder alone, no process running and no --config: takeover list reads it, compensate undoes a write', async () => {
    const key = idempotencyKey({ taskId: 'T-cli-run-acme', tenant: 'acme', billNo: 'ACME-202611-0001', action: 'mark_processed' });
    const before = (await cli.control.journal()).length;
    const queue = await paperclip(['takeover', 'list', '--data-dir', cli.dataDir]);
    assert.equal(queue.code, 0, queue.stderr);
    assert.match(queue.stdout, /no open takeover items/, 'the folder has none: every item of its batches ended done or awaits approval');
    const otherPrefix = join(cli.dir, 'other-prefix.yaml');
    writeFileSync(otherPrefix, readFileSync(cli.config, 'utf8').replace(/^prefix: .*/m, 'prefix: elsewhere'));
    const mismatched = await paperclip(['takeover', 'list', '--data-dir', cli.dataDir, '--config', otherPrefix]);
    assert.equal(mismatched.code, 2, mismatched.stderr);
    assert.match(mismatched.stderr, /names prefix "elsewhere" .* but the data folder .* holds prefix "paperclip-local"/);
    assert.doesNotMatch(mismatched.stdout, /no open takeover items/, 'a folder read with the wrong tables never shows an empty queue');
    const unknown = await paperclip(['compensate', `k-acme_${'0'.repeat(32)}`, '--reason', 'no such write', '--data-dir', cli.dataDir]);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.doesNotMatch(unknown.stderr, /\n\s+at /, 'no stack trace for an unknown key');
    const undone = await paperclip(['compensate', key, '--reason', 'marked by mistake', '--data-dir', cli.dataDir]);
    assert.equal(undone.code, 0, undone.stderr);
    assert.equal(lastJson(undone.stdout)['rolledBack'], true, undone.stdout);
    const journal = await cli.control.journal();
    assert.deepEqual(
      journal.slice(before).map((e) => `${e.billNo} ${e.action}`),
      ['ACME-202611-0001 unmark'],
      'the inverse ran once, on that bill',
    );
  });

  test('--item runs one guarded write and prints its outcome as one JSON line', async () => {
    const before = (await cli.control.journal()).length;
    const run = await paperclipRun(cli, 'acme', '--item', 'ACME-202611-0004', '--action', 'unmark_processed');
    assert.equal(run.code, 0, run.stderr);
    const outcome = lastJson(run.stdout);
    assert.equal(outcome['outcome'], 'done');
    assert.equal(outcome['item'], 'ACME-202611-0004');
    assert.equal(outcome['claim'], 'DONE');
    assert.match(String(outcome['key']), KEY_PATTERN);
    const journal = await cli.control.journal();
    assert.equal(journal.length, before + 1);
    assert.equal(journal.at(-1)?.billNo, 'ACME-202611-0004');
  });

  test('a second tenant: its one pending bill done on an independent readback with complete evidence; nothing of acme touched', async () => {
    const before = (await cli.control.journal()).length;
    const run = await paperclipRun(cli, 'globex', '--task', 'T-cli-run-globex', '--fail-on', 'takeover,error,awaiting_approval:1');
    assert.equal(run.code, 0, run.stderr);
    const summary = lastJson(run.stdout);
    assert.deepEqual({ read: summary['read'], done: summary['done'], error: summary['error'] }, { read: 1, done: 1, error: 0 });
    const journal = (await cli.control.journal()).slice(before);
    assert.deepEqual(
      journal.map((e) => `${e.tenant} ${e.billNo} ${e.action}`),
      ['globex GLOBEX-202611-0001 mark'],
    );
    const records = [...evidenceObjects(cli.dataDir).entries()].filter(([name]) => name.endsWith('/record.json'));
    const found = records
      .map(([name, path]) => ({ name, record: JSON.parse(readFileSync(path, 'utf8')) }))
      .find((r) => r.record.billNo === 'GLOBEX-202611-0001');
    assert.equal(found?.record.verdict, 'confirmed');
    assert.ok(
      ['list', 'detail', 'export'].includes(found?.record.readbackSource),
      'read back in a session of its own, from a configured source',
    );
    const objects = evidenceObjects(cli.dataDir);
    const prefix = found!.name.slice(0, -'record.json'.length);
    for (const name of ['before.png', 'after.png', 'trace.zip']) assert.ok(objects.has(prefix + name), name);
    assert.ok(!objects.has(prefix + 'readback.png'), 'a confirmed readback is recorded by its observations, not a picture');
  });

  test("another tenant's bill: rejected at routing with only the token API asked, before any browser; nothing written", async () => {
    const { reason, requests } = await rejectedAtRouting(cli, 'GLOBEX-202611-0001', 'unmark_processed');
    assert.match(reason, /GLOBEX-202611-0001/);
    assert.deepEqual(
      requests.filter((r) => !r.startsWith('GET /api/v1/bills/GLOBEX-202611-0001')),
      [],
      'no login page, list or any other page: no browser',
    );
  });

  test('the irreversible refund waits for its approval, then runs once', async () => {
    const bill = (await cli.control.state()).bills.find((b) => b.billNo === 'ACME-202611-0003');
    assert.ok(bill, 'the simulator has the acme overcharge');
    await refundsOnceAfterApproval(cli, 'ACME-202611-0003', '--param', `amount=${(bill.amountCents / 100).toFixed(2)}`);
  });

  test('a batch whose list cannot be read exits 1 with the error in the summary line', async () => {
    const before = await cli.control.journal();
    const run = await paperclipRun(cli, 'initech');
    assert.equal(run.code, 1, run.stderr);
    const summary = lastJson(run.stdout);
    assert.equal(summary['tenant'], 'initech');
    assert.ok(summary['error'], run.stdout);
    assert.deepEqual(await cli.control.journal(), before);
  });
});

/**
 * `paperclip run` on the second back office, Ledgerly (sitepacks/ledgerly.yaml): batches for two
 * orgs, a cross-org item, and the irreversible refund approved from its mail while the run waits.
 * acme: N-7001, N-7002 billing errors, N-7003 a duplicate charge, N-7004 resolved; globex: N-8001.
 */
describe('paperclip run on Ledgerly', () => {
  const cli = useLedgerlyForCli({
    controlToken: 'cli-run-ledgerly',
    asyncDelayMs: 100,
    orgs: [
      { id: 'acme', billingErrors: 2, duplicateCharges: 1, resolved: 1, refunded: 0 },
      { id: 'globex', billingErrors: 1, duplicateCharges: 0, resolved: 0, refunded: 0 },
    ],
  });

  test('batches for two orgs: one resolve per pending billing error, each done on a readback through the API, complete evidence; the refund waits', async () => {
    for (const [tenant, read, done, awaiting] of [
      ['acme', 4, 2, 1],
      ['globex', 1, 1, 0],
    ] as const) {
      const run = await paperclipRun(cli, tenant, '--task', `T-cli-ledgerly-${tenant}`);
      assert.equal(run.code, 0, run.stderr);
      const summary = lastJson(run.stdout);
      assert.deepEqual(
        { read: summary['read'], done: summary['done'], awaiting: summary['awaiting_approval'], takeover: summary['takeover'] },
        { read, done, awaiting, takeover: 0 },
        run.stderr,
      );
    }
    const journal = await cli.control.journal();
    // A resolve is two vendor writes (the reason saved, then Resolve): each exactly once per item, nothing else.
    assert.deepEqual(journal.map((e) => `${e.billNo} ${e.action}`).sort(), [
      'N-7001 edit',
      'N-7001 resolve',
      'N-7002 edit',
      'N-7002 resolve',
      'N-8001 edit',
      'N-8001 resolve',
    ]);
    const objects = evidenceObjects(cli.dataDir);
    // Each item's folder is evidence/<tenant>/<task>/<key>/; its record.json names the bill.
    const records = [...objects.entries()]
      .filter(([name]) => name.endsWith('/record.json'))
      .map(([name, path]) => ({ folder: name.slice(0, -'record.json'.length), record: JSON.parse(readFileSync(path, 'utf8')) }));
    for (const billNo of ['N-7001', 'N-7002', 'N-8001']) {
      const found = records.find((r) => r.record.billNo === billNo);
      assert.ok(found, `${billNo} has a record`);
      const { folder: prefix, record } = found;
      assert.equal(record.outcome, 'done');
      assert.equal(record.verdict, 'confirmed');
      assert.equal(record.readbackSource, 'api', 'read back through the API in a session of its own, never the write page');
      for (const name of ['before.png', 'after.png', 'trace.zip']) assert.ok(objects.has(prefix + name), `${billNo} has ${name}`);
    }
  });

  test('an item of another org: rejected at routing, before any browser loads the app; nothing written', async () => {
    const { reason, requests } = await rejectedAtRouting(cli, 'N-8001', 'reopen');
    assert.match(reason, /N-8001 is not visible to svc-ledgerly-acme \(api\)/);
    assert.deepEqual(
      requests.filter((r) => !r.startsWith('POST /api/session') && !r.startsWith('GET /api/discrepancies/N-8001')),
      [],
      'only the API login and the item read: no page, script or browser call',
    );
  });

  test('the irreversible refund waits for its approval, then runs once', async () => {
    await refundsOnceAfterApproval(cli, 'N-7003');
  });
});
