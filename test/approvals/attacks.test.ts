import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SendTaskSuccessCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { useHarness, type Harness } from '../support/embedded.js';
import { appendUnchecked } from '../support/audit-events.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { attestCompensationStart, attestedTask } from '../../src/app/requester.js';
import { APPROVERS, approvalRequestFor, executionStatus, linkFromInbox, openLink } from './helpers.js';
import { operatorsAlertAbout, refundTask, signedLink, waitUntil } from './helpers.js';

/**
 * Attacks on the write path and the approval gate, through the real local
 * stack: the guarded-write ASL on the local Step Functions endpoint, the
 * approval server, dynalite, s3rver, Chromium and the simulator. The
 * simulator's journal is the proof that nothing was written.
 */
describe('attacks on routing and approvals', () => {
  const h = useHarness();

  const writes = async () => (await h.control.journal()).filter((e) => ['refund', 'note', 'mark', 'unmark'].includes(e.action));
  const base = { tenant: 'acme', billNo: 'ACME-202611-0003' };

  test('prototype names are unknown names: a clean rejection naming the field, no stack trace, nothing written', async () => {
    await h.control.reset();
    for (const [n, action] of ['constructor', 'to_string', 'has_own_property', 'value_of'].entries()) {
      const result = await h.runTask({ ...base, taskId: `T-proto-${n}`, action });
      assert.equal(result.output['outcome'], 'rejected', JSON.stringify(result.output));
      assert.match(String(result.output['reason']), new RegExp(`action "${action}" is not enabled; enabled actions: `));
    }
    const constructorParam = await h.runTask({
      ...base,
      taskId: 'T-proto-param',
      action: 'add_note',
      params: { note: 'ok', constructor: 'x' },
    });
    assert.equal(constructorParam.output['outcome'], 'rejected');
    assert.match(String(constructorParam.output['reason']), /"constructor" is not a parameter of action "add_note"; it takes note/);
    const constructorCase = await h.runTask({ ...base, taskId: 'T-proto-action', action: 'constructor' });
    assert.doesNotMatch(JSON.stringify(constructorCase.output), /TypeError|\/src\/|\bat [A-Za-z.]+ \(/, 'no stack trace or source path');
    assert.deepEqual(await writes(), []);
  });

  test('an empty, blank or invisible note is refused at routing instead of ending done on a vendor 400', async () => {
    await h.control.reset();
    for (const [n, note] of ['', '   '].entries()) {
      const result = await h.runTask({ ...base, taskId: `T-empty-note-${n}`, action: 'add_note', params: { note } });
      assert.equal(result.output['outcome'], 'rejected', JSON.stringify(result.output));
      assert.match(String(result.output['reason']), /task\.params\.note: action "add_note" needs note, and it must not be blank/);
    }
    // Text that passes trim() but shows nothing: zero-width spaces, a lone combining mark, a Hangul filler, a blank Braille cell.
    for (const [n, note] of ['\u200b', '\u200b\u200b\ufeff', '\u0301', '\u3164', '\u2800', ' \u200d '].entries()) {
      const result = await h.runTask({ ...base, taskId: `T-invisible-note-${n}`, action: 'add_note', params: { note } });
      assert.equal(result.output['outcome'], 'rejected', `${JSON.stringify(note)}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /task\.params\.note: note must not be blank: it needs at least one visible/);
    }
    for (const [n, note] of ['a\u200eb', 'note\u061c', 'x\u2067y\u2069'].entries()) {
      const result = await h.runTask({ ...base, taskId: `T-bidi-note-${n}`, action: 'add_note', params: { note } });
      assert.equal(result.output['outcome'], 'rejected', `${JSON.stringify(note)}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /task\.params\.note: note must not contain bidirectional control characters/);
    }
    const missing = await h.runTask({ ...base, taskId: 'T-empty-note-x', action: 'add_note' });
    assert.equal(missing.output['outcome'], 'rejected');
    assert.deepEqual(await writes(), []);
    const requests = (await h.control.timings()).filter((t) => t.path.includes('/notes'));
    assert.deepEqual(requests, [], 'the vendor API was never asked to store a note');
  });

  test('line breaks in the requester or a parameter never reach a mail: refused at routing, no approval request, nothing written', async () => {
    await h.control.reset();
    const injected = 'x\n\n请立即批准 Approve now: http://evil.example/approvals/abc';
    const { task: refund } = await refundTask(h, 'T-inject-requester');
    const cases = [
      { ...refund, taskId: 'T-inject-requester', requestedBy: `ops@acme.example\n${injected}` },
      { ...refund, taskId: 'T-inject-amount', params: { amount: `${refund.params.amount}\n${injected}` } },
      { ...refund, taskId: 'T-inject-reason', params: { ...refund.params, reason: `退款${injected}` } },
      { ...refund, taskId: 'T-inject-bidi', params: { ...refund.params, reason: 'abc\u202edcba' } },
      { ...refund, taskId: 'T-format-amount', params: { amount: '1e9' } },
    ];
    for (const task of cases) {
      const result = await h.runTask(task);
      assert.equal(result.output['outcome'], 'rejected', `${task.taskId}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /task\.(requestedBy|params\.(amount|reason)):/, task.taskId);
    }
    const mails = await h.paperclip.stack.fetchEmails();
    assert.ok(!mails.some((m) => JSON.stringify(m).includes('evil.example')), 'no mail carries the injected text');
    assert.deepEqual(await writes(), []);
  });

  for (const spelling of [' FINANCE.LEAD@ACME.EXAMPLE ', 'Finance Lead <finance.lead@acme.example>', 'finance.lead+refunds@acme.example']) {
    test(`a refund requested as ${JSON.stringify(spelling)} cannot be approved by finance.lead`, async () => {
      await h.control.reset();
      const { task, key } = await refundTask(h, `T-self-${spelling.length}`, spelling);
      const executionArn = await h.startTask(task);
      const request = await approvalRequestFor(h, key);
      assert.equal(request.requester, APPROVERS[0], 'the requester is stored in canonical form');
      assert.deepEqual(request.allowedApprovers, [APPROVERS[1]], 'the requester is not asked');
      const self = await openLink(signedLink(h, { approvalId: request.approvalId, approver: APPROVERS[0], expiresAt: request.expiresAt }));
      assert.equal(self.status, 403);
      assert.match(self.html, /申请人不能审批自己的申请/);
      // End the wait: the other approver rejects.
      const page = await openLink(await linkFromInbox(h, request.approvalId, APPROVERS[1]));
      const rejected = await postForm(h, page, 'reject');
      assert.equal(rejected.status, 200);
      assert.equal((await h.waitForExecution(executionArn)).output['outcome'], 'rejected');
      assert.deepEqual(await writes(), []);
    });
  }

  test('who asked is what an entry point attested: a body-named, replayed or mismatched requester is rejected at routing, nothing written', async () => {
    await h.control.reset();
    const s = h.paperclip.services;
    const sfn = s.clients.sfn;
    const { task, key } = await refundTask(h, 'T-unattested', 'controller@acme.example');
    // Started on the workflow directly, with StartExecution access only: no attestation.
    const start = async (name: string, input: unknown) =>
      (
        await sfn.send(
          new StartExecutionCommand({ stateMachineArn: h.paperclip.arns.guardedWrite, name, input: JSON.stringify({ task: input }) }),
        )
      ).executionArn!;
    const attestedForOther = await attestedTask(s, task, 'some-other-execution');
    const attestedAsFinance = await attestedTask(s, { ...task, requestedBy: 'finance.lead@acme.example' }, 'forged-requester');
    const cases: Array<[string, unknown]> = [
      ['unattested', task],
      ['replayed', attestedForOther],
      ['forged-requester', { ...attestedAsFinance, requestedBy: 'controller@acme.example' }],
    ];
    for (const [name, input] of cases) {
      const result = await h.waitForExecution(await start(name, input));
      assert.equal(result.output['outcome'], 'rejected', `${name}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /task\.requestedBy: the requester is not attested by an entry point/, name);
    }
    assert.deepEqual(await s.approvals.byKey(key), [], 'no approval was requested');
    assert.equal(await s.claims.get(key), undefined, 'nothing was claimed');
    // A batch started directly, naming a requester it cannot attest: ReadList refuses it, the batch fails, no item runs.
    const batch = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: h.paperclip.arns.batch,
        name: 'unattested-batch',
        input: JSON.stringify({ taskId: 'T-unattested-batch', tenant: 'acme', requestedBy: 'schedule' }),
      }),
    );
    const ended = await waitUntil('the batch to end', async () => {
      const d = await sfn.send(new DescribeExecutionCommand({ executionArn: batch.executionArn! }));
      return d.status === 'RUNNING' ? undefined : d;
    });
    assert.equal(ended.status, 'FAILED', JSON.stringify(ended));
    assert.deepEqual(await s.claims.byTask('T-unattested-batch'), []);
    assert.deepEqual(await writes(), []);
  });

  test('a forged SendTaskSuccess with the task token ends in takeover with an alert: nothing written, the table still PENDING', async () => {
    await h.control.reset();
    const { task, key } = await refundTask(h, 'T-forged-callback');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    const sfn = h.paperclip.services.clients.sfn;
    // A reader of the execution history does not get the token here (AWS records it; see docs/approvals.md).
    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }));
    assert.ok(!JSON.stringify(history.events).includes(request.taskToken), 'the local history withholds the task token');
    // Someone who has it anyway (read access to the approvals table) answers the waiting task with an invented approval.
    await sfn.send(
      new SendTaskSuccessCommand({
        taskToken: request.taskToken,
        output: JSON.stringify({ approvalId: request.approvalId, approver: 'mallory@evil.example', decidedAt: new Date().toISOString() }),
      }),
    );
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover', JSON.stringify(result.output));
    assert.match(String(result.output['reason']), /ApprovalNotProvenError: no provable approval .*no APPROVED request/);
    assert.deepEqual(await writes(), [], 'no refund reached the vendor');
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
    const trail = await h.paperclip.services.audit.events(key);
    const refused = trail.find((e) => e.type === 'approval_not_proven');
    assert.ok(refused, trail.map((e) => e.type).join(', '));
    assert.deepEqual((refused.data['claimedByWorkflow'] as { approver?: string }).approver, 'mallory@evil.example');
    assert.ok(!trail.some((e) => e.type === 'write_started' || e.type === 'approved'));
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'TAKEOVER');
    const alert = await operatorsAlertAbout(h, key);
    assert.ok(alert);
  });

  test('compensates is accepted only from the compensation path, for the original write of the same tenant: a forged one writes nothing', async () => {
    await h.control.reset();
    const original = { taskId: 'T-comp-original', tenant: 'acme', billNo: 'ACME-202611-0002', action: 'mark_processed' };
    const originalKey = idempotencyKey(original);
    assert.equal((await h.runTask(original)).output['outcome'], 'done');
    const globexBill = (await h.control.state()).bills.find((b) => b.tenant === 'globex' && b.status === 'PENDING')?.billNo;
    assert.ok(globexBill, 'a pending globex bill');
    const inverse = { ...original, action: 'unmark_processed' };
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      // The right inverse of a real write, from an ordinary task body: the compensation path never opened it.
      ['T-comp-original', { ...inverse, compensates: originalKey }, /accepted only from the compensation path/],
      ['unknown key', { ...inverse, compensates: `k-acme_${'0'.repeat(32)}` }, /there is no write with key k-acme_0+/],
      [
        "another tenant's key",
        { taskId: 'T-comp-original', tenant: 'globex', billNo: globexBill, action: 'unmark_processed', compensates: originalKey },
        /is not a write of tenant "globex"/,
      ],
      ['another bill', { ...inverse, billNo: 'ACME-202611-0003', compensates: originalKey }, /another task or bill/],
      [
        'not the registered inverse',
        { ...original, action: 'add_note', params: { note: 'x' }, compensates: originalKey },
        /not "add_note"/,
      ],
      ['not a key', { ...inverse, compensates: 'anything' }, /compensates is the idempotency key/],
    ];
    for (const [name, task, reason] of cases) {
      const result = await h.runTask(task);
      assert.equal(result.output['outcome'], 'rejected', `${name}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), reason, name);
      assert.match(String(result.output['reason']), /task\.compensates/, name);
    }
    assert.deepEqual(
      (await writes()).map((e) => e.action),
      ['mark'],
      'only the original write reached the vendor',
    );
    assert.equal((await h.paperclip.services.claims.get(originalKey))?.status, 'DONE');
    assert.ok(
      !(await h.paperclip.services.audit.events(originalKey)).some((e) => e.type.startsWith('compensat')),
      'the original shows no compensation',
    );

    // With audit-table write access (not the attestation key): a correctly chained, open compensation_started for the right
    // inverse — unsigned, with an invented signature, or with the real signature of another requester — opens nothing.
    const inverseKey = idempotencyKey(inverse);
    const signedForOther = await attestCompensationStart(h.paperclip.services, {
      compensates: originalKey,
      inverseKey,
      inverseAction: 'unmark_processed',
      requestedBy: 'operator:alice',
    });
    for (const [n, attestation] of [undefined, 'A'.repeat(43), signedForOther].entries()) {
      await appendUnchecked(h.paperclip.services, originalKey, {
        type: 'compensation_started',
        actor: 'demo',
        data: { inverse: 'unmark_processed', reason: 'forged', inverseKey, preStatus: 'PENDING', requestedBy: 'demo', attestation },
      });
      const result = await h.runTask({ ...inverse, compensates: originalKey });
      assert.equal(result.output['outcome'], 'rejected', `forged start ${n}: ${JSON.stringify(result.output)}`);
      assert.match(String(result.output['reason']), /task\.compensates: accepted only from the compensation path/);
      await appendUnchecked(h.paperclip.services, originalKey, {
        type: 'compensation_failed',
        actor: 'demo',
        data: { inverseKey, outcome: 'rejected' },
      });
    }
    assert.deepEqual(
      (await writes()).map((e) => e.action),
      ['mark'],
      'a forged compensation_started let no unmark through',
    );
  });

  test('the Origin is checked against the configured public URL, not against the Host header the client sent', async () => {
    await h.control.reset();
    const { task, key } = await refundTask(h, 'T-origin-host');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    const page = await openLink(await linkFromInbox(h, request.approvalId, APPROVERS[0]));
    const spoofed = await postForm(h, page, 'approve', { host: 'evil.example', origin: 'http://evil.example' });
    assert.equal(spoofed.status, 403);
    assert.match(spoofed.body, /请求来源不被接受/);
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
    assert.equal(await executionStatus(h, executionArn), 'RUNNING');
    assert.equal((await postForm(h, page, 'reject')).status, 200);
    assert.equal((await h.waitForExecution(executionArn)).output['outcome'], 'rejected');
    assert.deepEqual(await writes(), []);
  });
});

/** Posts the page's decision form over raw HTTP, so the Host header can be set too. */
function postForm(
  h: Harness,
  page: { html: string; fields: Record<string, string>; cookie?: string },
  decision: 'approve' | 'reject',
  headers: { host?: string; origin?: string } = {},
): Promise<{ status: number; body: string }> {
  const base = new URL(h.paperclip.approvals.url);
  const body = new URLSearchParams({ ...page.fields, decision }).toString();
  const path = /<form method="post" action="([^"]+)">/.exec(page.html)?.[1];
  if (!path) throw new Error('the approval page has no decision form');
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path,
        headers: {
          host: headers.host ?? base.host,
          origin: headers.origin ?? base.origin,
          cookie: page.cookie ?? '',
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
