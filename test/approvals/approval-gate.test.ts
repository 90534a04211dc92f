import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedBrowser } from '../../src/browser/chromium.js';
import { compensate, CompensationRefusedError } from '../../src/app/compensation.js';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { handler as approvalHttp } from '../../lambdas/approval-http.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { SendTaskSuccessCommand } from '@aws-sdk/client-sfn';
import { LEDGERLY } from '../support/back-offices.js';
import { startLedgerlyHarness, useHarness } from '../support/embedded.js';
import { APPROVERS, approvalRequestFor, approveOnPage, executionStatus, linkFromInbox, OVERCHARGE_BILL } from './helpers.js';
import { openLink, postDecision, refundTask, signedLink } from './helpers.js';

/**
 * The approval gate end to end: the real guarded-write ASL waiting on
 * RequestApproval, the approval email in the local SES inbox, the approval
 * pages served by the local server (and once by the Lambda adapter), a real
 * browser, and the refund in the simulator's journal.
 */
describe('approval gate for irreversible actions', () => {
  const h = useHarness();
  let approvedRefundKey = '';

  const refunds = async () => (await h.control.journal()).filter((e) => e.action === 'refund');
  const decisions = async (key: string) =>
    (await h.paperclip.services.audit.events(key)).filter((e) => ['approved', 'rejected'].includes(e.type));

  test('an approver follows the emailed link and approves in a browser: the refund runs once, after the approval was recorded', async () => {
    await h.control.reset();
    const { task, key } = await refundTask(h, 'T-approval-browser');
    approvedRefundKey = key;
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    assert.deepEqual(request.allowedApprovers, [...APPROVERS]);
    const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);
    const mail = (await h.paperclip.stack.fetchEmails()).find((m) => m.body.text?.includes(request.approvalId))!;
    assert.ok(!JSON.stringify(mail).includes(request.taskToken), 'the task token never leaves the backend');
    assert.ok(
      link.startsWith(`${h.paperclip.approvals.url}/approvals/${request.approvalId}?`),
      'links point at the running approval server',
    );
    // Fetched before the decision, like a second approver who opened the mail too.
    const secondApprover = await openLink(await linkFromInbox(h, request.approvalId, APPROVERS[1]));
    assert.equal(secondApprover.status, 200);

    const context = await (await sharedBrowser()).newContext({ locale: 'zh-CN', viewport: { width: 1000, height: 900 } });
    try {
      const page = await context.newPage();
      const response = await page.goto(link);
      assert.equal(response?.status(), 200);
      const text = await page.locator('main').innerText();
      for (const expected of [
        'ACME 供应链',
        OVERCHARGE_BILL,
        '退款',
        `¥${Number(task.params.amount).toLocaleString('en-US', { minimumFractionDigits: 2 })}`,
        'schedule',
        '有效期至',
      ]) {
        assert.ok(text.includes(expected), `the page shows ${expected}`);
      }
      const image = page.getByRole('img', { name: /操作前截图/ });
      assert.match(
        (await image.getAttribute('src')) ?? '',
        /^\/approvals\/[^/]+\/before\.png\?/,
        'the screenshot comes through the approval server',
      );
      assert.ok(
        (await image.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0))) > 0,
        'the before-screenshot loads',
      );
      assert.ok(!(await page.content()).includes(h.paperclip.stack.endpoints.s3), 'the browser is never sent to S3');

      // Looking at the page decided nothing.
      assert.equal(await executionStatus(h, executionArn), 'RUNNING');
      assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
      assert.deepEqual(await refunds(), []);

      await approveOnPage(page);
    } finally {
      await context.close();
    }

    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    const executed = await refunds();
    assert.equal(executed.length, 1, 'exactly one refund');
    assert.equal(executed[0]?.billNo, OVERCHARGE_BILL);
    assert.equal(executed[0]?.identity, 'svc-recon-acme');

    const stored = await h.paperclip.services.approvals.get(request.approvalId);
    assert.equal(stored?.status, 'APPROVED');
    assert.equal(stored?.decidedBy, APPROVERS[0]);
    const events = await h.paperclip.services.audit.events(key);
    const approved = events.find((e) => e.type === 'approved');
    const writeStarted = events.find((e) => e.type === 'write_started');
    assert.ok(approved && writeStarted, events.map((e) => e.type).join(', '));
    assert.equal(approved.actor, APPROVERS[0]);
    assert.ok(approved.at < writeStarted.at && approved.seq < writeStarted.seq, 'the approval is recorded before the write starts');
    const record = JSON.parse(
      (await h.paperclip.services.evidence.get(evidenceKey({ tenant: 'acme', taskId: task.taskId, key }, 'record.json')))!.toString(),
    );
    assert.deepEqual(record.approval, { approvalId: request.approvalId, approver: APPROVERS[0], decidedAt: stored?.decidedAt });

    // The other approver's form, loaded while the request was pending, can no longer decide anything.
    const late = await postDecision(h, link, { ...secondApprover.fields, decision: 'approve' }, { cookie: secondApprover.cookie! });
    assert.equal(late.status, 409);
    assert.match(late.html, /该申请已有决定/);
    assert.equal((await openLink(await linkFromInbox(h, request.approvalId, APPROVERS[1]))).status, 409, 'the link now shows the decision');
    assert.equal((await refunds()).length, 1);
    assert.equal((await decisions(key)).length, 1);
  });

  test('an irreversible refund cannot be compensated: a clear refusal, nothing runs', async () => {
    assert.ok(approvedRefundKey, 'needs the refund of the previous test');
    const journal = await h.control.journal();
    await assert.rejects(
      compensate(h.paperclip.services, { key: approvedRefundKey, requestedBy: 'ops@acme.example', reason: 'try to undo a refund' }),
      (error: Error) => error instanceof CompensationRefusedError && /refund on ACME-202611-0013 is irreversible/.test(error.message),
    );
    assert.deepEqual(await h.control.journal(), journal);
    assert.ok(!(await h.paperclip.services.audit.events(approvedRefundKey)).some((e) => e.type.startsWith('compensation')));
  });

  test('a plain GET decides nothing; forged, foreign, self, expired, cross-site and replayed requests are refused; a rejection executes nothing', async () => {
    await h.control.reset();
    // Requested by one of the approvers: only the other one may decide.
    const { task, key } = await refundTask(h, 'T-approval-refusals', APPROVERS[1]);
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    assert.deepEqual(request.allowedApprovers, [APPROVERS[0]], 'the requester is not asked');
    const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);
    assert.ok(
      !(await h.paperclip.stack.fetchEmails()).some(
        (m) => m.body.text?.includes(request.approvalId) && m.destination.to.includes(APPROVERS[1]),
      ),
    );

    const nothingChanged = async (why: string) => {
      assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING', `${why}: still pending`);
      assert.equal(await executionStatus(h, executionArn), 'RUNNING', `${why}: the workflow still waits (no SendTaskSuccess/Failure)`);
      assert.deepEqual(await refunds(), [], `${why}: no refund`);
      assert.deepEqual(await decisions(key), [], `${why}: no decision in the audit trail`);
    };

    // Mail scanners and link previews fetch the link, sometimes twice, sometimes with HEAD.
    const scanned = await openLink(link);
    assert.equal(scanned.status, 200);
    assert.equal((await openLink(link)).status, 200);
    assert.equal((await fetch(link, { method: 'HEAD' })).status, 200);
    await nothingChanged('GET and HEAD');

    const url = new URL(link);
    const sig = url.searchParams.get('sig')!;
    const tampered = new URL(link);
    tampered.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`);
    const forged = await openLink(tampered.toString());
    assert.equal(forged.status, 403);
    assert.match(forged.html, /链接签名无效/);
    const otherPerson = new URL(link);
    otherPerson.searchParams.set('approver', APPROVERS[1]);
    assert.equal((await openLink(otherPerson.toString())).status, 403, 'the signature binds the approver');
    const longer = new URL(link);
    longer.searchParams.set('exp', String(request.expiresAt + 86_400));
    assert.equal((await openLink(longer.toString())).status, 403, 'the signature binds the expiry');
    const forgedPost = await postDecision(
      h,
      link,
      { ...scanned.fields, sig: tampered.searchParams.get('sig')!, decision: 'approve' },
      { cookie: scanned.cookie! },
    );
    assert.equal(forgedPost.status, 403);

    const stranger = await openLink(
      signedLink(h, { approvalId: request.approvalId, approver: 'mallory@evil.example', expiresAt: request.expiresAt }),
    );
    assert.equal(stranger.status, 403);
    assert.match(stranger.html, /您不是该租户的审批人/);
    const requester = await openLink(
      signedLink(h, { approvalId: request.approvalId, approver: APPROVERS[1], expiresAt: request.expiresAt }),
    );
    assert.equal(requester.status, 403);
    assert.match(requester.html, /申请人不能审批自己的申请/);
    const expired = await openLink(
      signedLink(h, { approvalId: request.approvalId, approver: APPROVERS[0], expiresAt: Math.floor(Date.now() / 1000) - 60 }),
    );
    assert.equal(expired.status, 410);
    assert.match(expired.html, /审批链接已过期/);
    assert.equal(
      (await openLink(signedLink(h, { approvalId: 'AAAAAAAAAAAAAAAAAAAAAAAA', approver: APPROVERS[0], expiresAt: request.expiresAt })))
        .status,
      404,
    );
    assert.equal((await openLink(`${h.paperclip.approvals.url}/approvals/${request.approvalId}?approver=x&exp=1&sig=y`)).status, 400);

    const approve = { ...scanned.fields, decision: 'approve' };
    // A note that shows nothing, or that reorders text, is refused with the field and the fix; the valid form is untouched.
    for (const [note, why] of [
      ['\u200b\u200b', /form\.note: note must not be blank: it needs at least one visible/],
      ['\u0301', /form\.note: note must not be blank/],
      ['ok \u202eevil', /form\.note: note must not contain bidirectional control characters/],
    ] as const) {
      const invisible = await postDecision(h, link, { ...approve, note }, { cookie: scanned.cookie! });
      assert.equal(invisible.status, 400, JSON.stringify(note));
      assert.match(invisible.html, why);
    }
    const noCookie = await postDecision(h, link, approve);
    assert.equal(noCookie.status, 403);
    assert.match(noCookie.html, /表单已失效/);
    const crossSite = await postDecision(h, link, approve, { cookie: scanned.cookie!, origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.match(crossSite.html, /请求来源不被接受/);
    assert.equal((await postDecision(h, link, approve, { cookie: scanned.cookie!, origin: null })).status, 403, 'no Origin, no decision');
    assert.equal(
      (
        await postDecision(
          h,
          link,
          { ...approve, csrf: scanned.fields['csrf']!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
          { cookie: scanned.cookie! },
        )
      ).status,
      403,
    );
    const strangerPost = await postDecision(
      h,
      link,
      {
        ...approve,
        approver: 'mallory@evil.example',
        sig: new URL(
          signedLink(h, { approvalId: request.approvalId, approver: 'mallory@evil.example', expiresAt: request.expiresAt }),
        ).searchParams.get('sig')!,
      },
      { cookie: scanned.cookie! },
    );
    assert.equal(strangerPost.status, 403);
    await nothingChanged('refused requests');

    // The same handling behind the Lambda Function URL adapter: read the page, then reject.
    const domainName = 'abc123.lambda-url.us-east-1.on.aws';
    const page = await approvalHttp(functionUrlEvent('GET', url, domainName));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /批准/);
    const shot = await approvalHttp(
      functionUrlEvent('GET', new URL(`/approvals/${request.approvalId}/before.png${url.search}`, url), domainName),
    );
    assert.equal(shot.statusCode, 200);
    assert.equal(shot.isBase64Encoded, true);
    assert.ok(Buffer.from(shot.body, 'base64').subarray(1, 4).equals(Buffer.from('PNG')));
    await nothingChanged('Function URL GETs');
    const lambdaFields = Object.fromEntries(
      [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    const rejectForm = new URLSearchParams({ ...lambdaFields, decision: 'reject', note: '金额待核实 amount to be checked' }).toString();
    const postVia = (origin: string) =>
      approvalHttp({
        ...functionUrlEvent('POST', new URL(url.pathname, url), domainName),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        cookies: (page.cookies ?? []).map((c) => c.split(';')[0]!),
        body: Buffer.from(rejectForm).toString('base64'),
        isBase64Encoded: true,
      });
    // A public base URL is configured (the one in the mails): decisions come from there, not from the endpoint's own domain.
    assert.equal((await postVia(`https://${domainName}`)).statusCode, 403);
    await nothingChanged('a POST from an origin other than the public base URL');
    const rejected = await postVia(h.paperclip.approvals.url);
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.match(rejected.body, /已拒绝/);

    // Replays of a decided request, with a form that was valid a moment ago.
    const replay = await postDecision(h, link, approve, { cookie: scanned.cookie! });
    assert.equal(replay.status, 409);
    assert.match(replay.html, /该申请已有决定/);
    assert.equal((await postDecision(h, link, { ...approve, decision: 'reject' }, { cookie: scanned.cookie! })).status, 409);

    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'rejected');
    assert.match(String(result.output['reason']), /rejected by finance\.lead@acme\.example: 金额待核实/);
    assert.deepEqual(await refunds(), [], 'a rejected refund executes nothing');
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'REJECTED');
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'REJECTED');
    const events = await h.paperclip.services.audit.events(key);
    assert.deepEqual(
      events.filter((e) => e.type === 'rejected').map((e) => e.actor),
      [APPROVERS[0], 'svc-recon-acme'],
      'the decision by the approver, then the item closed as rejected',
    );
    assert.ok(!events.some((e) => e.type === 'write_started' || e.type === 'approved'));
  });
});

/**
 * The same gate in front of Ledgerly's irreversible refund (a More menu, then an
 * alertdialog that asks for the amount to be typed; the amount is read on the
 * page, so the task carries no parameters). The approval server and its
 * refusals do not depend on the back office and are covered in full above;
 * here, what does: the pre-state read for the approval page, the write after
 * an approval, and Ledgerly's journal proving what was and was not written.
 */
describe('approval gate on Ledgerly', () => {
  const h = useHarness(startLedgerlyHarness);

  const approver = 'finance.lead@acme.example';
  const [firstCharge, secondCharge] = LEDGERLY.pending('acme').irreversible as [string, string];
  const refundOf = (billNo: string, taskId: string) => {
    const task = { taskId, tenant: 'acme', billNo, action: 'refund', requestedBy: 'schedule', params: {} };
    return { task, key: idempotencyKey(task) };
  };
  const refunds = async () => (await h.control.journal()).filter((e) => LEDGERLY.journalActions.irreversible.includes(e.action));
  const stateOf = async (billNo: string) => (await h.control.state()).discrepancies.find((d) => d.id === billNo)?.state;
  const types = async (key: string) => (await h.paperclip.services.audit.events(key)).map((e) => e.type);

  test('approved from the emailed link: the refund runs once through the typed-amount dialog, after the approval; a replay is refused', async () => {
    await h.control.reset();
    const { task, key } = refundOf(firstCharge, 'T-ledgerly-approve');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    assert.deepEqual(request.allowedApprovers, [approver]);
    const link = await linkFromInbox(h, request.approvalId, approver);
    const form = await openLink(link);
    assert.equal(form.status, 200);
    assert.match(form.html, new RegExp(firstCharge));
    const shot = await fetch(new URL(/src="(\/approvals\/[^"]+\/before\.png\?[^"]+)"/.exec(form.html)![1]!.replace(/&amp;/g, '&'), link));
    assert.equal(shot.status, 200, 'the pre-state was read on Ledgerly and pictured for the approver');
    assert.equal(await executionStatus(h, executionArn), 'RUNNING');
    assert.deepEqual(await refunds(), [], 'nothing refunded before the decision');

    const decided = await postDecision(h, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.equal(decided.status, 200, decided.html.slice(0, 200));
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    const executed = await refunds();
    assert.deepEqual(
      executed.map((e) => [e.billNo, e.identity]),
      [[firstCharge, 'billing@acme.test']],
      'exactly one refund, by the org user',
    );
    assert.equal(await stateOf(firstCharge), 'refunded');
    const events = await types(key);
    assert.ok(events.indexOf('approved') >= 0 && events.indexOf('approved') < events.indexOf('write_started'), events.join(', '));
    const record = JSON.parse(
      (await h.paperclip.services.evidence.get(evidenceKey({ tenant: 'acme', taskId: task.taskId, key }, 'record.json')))!.toString(),
    );
    assert.equal(record.approval?.approver, approver);
    assert.equal(record.verdict, 'confirmed');

    const replay = await postDecision(h, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.equal(replay.status, 409, 'the decided request takes no second decision');
    assert.equal((await refunds()).length, 1, 'still one refund');
  });

  test('rejected: nothing is refunded; a forged signature and a replay of the decided form are refused', async () => {
    await h.control.reset();
    const { task, key } = refundOf(firstCharge, 'T-ledgerly-reject');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    const link = await linkFromInbox(h, request.approvalId, approver);
    const form = await openLink(link);

    const tampered = new URL(link);
    const sig = tampered.searchParams.get('sig')!;
    tampered.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`);
    assert.equal((await openLink(tampered.toString())).status, 403);
    const forged = await postDecision(
      h,
      link,
      { ...form.fields, sig: tampered.searchParams.get('sig')!, decision: 'approve' },
      { cookie: form.cookie! },
    );
    assert.equal(forged.status, 403);
    assert.equal((await h.paperclip.services.approvals.get(request.approvalId))?.status, 'PENDING');
    assert.equal(await executionStatus(h, executionArn), 'RUNNING', 'a forged decision does not end the wait');

    const rejected = await postDecision(h, link, { ...form.fields, decision: 'reject', note: 'not a duplicate' }, { cookie: form.cookie! });
    assert.equal(rejected.status, 200, rejected.html.slice(0, 200));
    const replay = await postDecision(h, link, { ...form.fields, decision: 'approve' }, { cookie: form.cookie! });
    assert.equal(replay.status, 409);
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'rejected');
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'REJECTED');
    assert.ok(!(await types(key)).includes('write_started'));
    assert.deepEqual(await refunds(), [], 'the journal holds no refund');
    assert.deepEqual(await h.control.journal(), [], 'nor any other write');
    assert.equal(await stateOf(firstCharge), 'open');
  });

  test('a forged SendTaskSuccess with the task token ends in takeover: nothing written on Ledgerly', async () => {
    await h.control.reset();
    const { task, key } = refundOf(secondCharge, 'T-ledgerly-forged-callback');
    const executionArn = await h.startTask(task);
    const request = await approvalRequestFor(h, key);
    await h.paperclip.services.clients.sfn.send(
      new SendTaskSuccessCommand({
        taskToken: request.taskToken,
        output: JSON.stringify({ approvalId: request.approvalId, approver, decidedAt: new Date().toISOString() }),
      }),
    );
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover', JSON.stringify(result.output));
    assert.match(String(result.output['reason']), /ApprovalNotProvenError/);
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'TAKEOVER');
    assert.deepEqual(await h.control.journal(), [], 'no write reached Ledgerly');
    assert.equal(await stateOf(secondCharge), 'open');
  });
});

function functionUrlEvent(method: string, url: URL, domainName: string) {
  return {
    version: '2.0',
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers: { host: domainName, 'user-agent': 'test' },
    isBase64Encoded: false,
    requestContext: { domainName, http: { method, path: url.pathname, sourceIp: '127.0.0.1' } },
  };
}
