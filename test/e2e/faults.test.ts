import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { useHarness } from '../support/embedded.js';
import { waitUntil } from '../approvals/helpers.js';

/**
 * Each production incident of the source article as a simulator fault, through
 * the real workflow: the journal says what the vendor really did, the claim and
 * the audit say what Paperclip concluded, and the two must agree.
 */
describe('fault handling on the embedded stack', () => {
  const h = useHarness();
  beforeEach(async () => {
    await h.control.reset({
      seed: 11,
      tenants: [
        { id: 'acme', pending: 8, overcharge: 0, processed: 0 },
        { id: 'globex', pending: 1, overcharge: 0, processed: 0 },
      ],
    });
  });

  const task = (billNo: string, taskId = 'T-faults') => ({
    taskId,
    tenant: billNo.startsWith('GLOBEX') ? 'globex' : 'acme',
    billNo,
    action: 'mark_processed',
  });
  const marksOf = async (billNo: string) => (await h.control.journal()).filter((e) => e.billNo === billNo && e.action === 'mark');
  const auditTypes = async (key: string) => (await h.paperclip.services.audit.events(key)).map((e) => e.type);
  const claimOf = async (t: ReturnType<typeof task>) => (await h.paperclip.services.claims.get(idempotencyKey(t)))!;
  /** The evidence keys each readback of the chain stored, in order. */
  const readbackPictures = async (key: string) =>
    (await h.paperclip.services.audit.events(key))
      .filter((e) => e.type === 'readback')
      .map((e) => (e.data['evidence'] as Array<{ key: string }>).map((o) => o.key));
  const record = async (t: ReturnType<typeof task>) => {
    const claim = (await h.paperclip.services.claims.get(idempotencyKey(t)))!;
    return JSON.parse((await h.paperclip.services.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
  };
  type Fault = Omit<Parameters<typeof h.control.setFaults>[0][number], 'bill'>;
  /**
   * Runs the task with one fault on its bill. `seen` is what each fault test checks first: the outcome, how many
   * times the vendor marked the bill (its journal), and how many commit clicks the audit trail records.
   */
  const runWithFault = async (t: ReturnType<typeof task>, fault: Fault) => {
    await h.control.setFaults([{ ...fault, bill: t.billNo }]);
    const result = await h.runTask(t);
    const types = await auditTypes(idempotencyKey(t));
    const clicks = types.filter((x) => x === 'write_started').length;
    return { result, types, seen: { outcome: result.output['outcome'], marks: (await marksOf(t.billNo)).length, clicks } };
  };

  test('half_success (toast, nothing committed): readback says not applied, takeover, no second click', async () => {
    const t = task('ACME-202611-0001');
    const { result, seen } = await runWithFault(t, { kind: 'half_success' });
    assert.deepEqual(seen, { outcome: 'takeover', marks: 0, clicks: 1 }, 'nothing marked; clicked once, never again');
    assert.match(String(result.output['reason']), /false success/);
    const rec = await record(t);
    assert.equal(rec.verdict, 'not_applied');
    assert.equal(rec.outcome, 'takeover');
    assert.ok(
      rec.evidence.some((e: { key: string }) => e.key.endsWith('after.png')),
      'the lying page is kept as evidence',
    );
    assert.equal((await h.paperclip.services.claims.get(idempotencyKey(t)))!.status, 'TAKEOVER');
  });

  test('commit_then_timeout: the write errs, readback finds it applied, done without a second click', async () => {
    const t = task('ACME-202611-0002');
    const { types, seen } = await runWithFault(t, { kind: 'commit_then_timeout', ms: 300 });
    assert.deepEqual(seen, { outcome: 'done', marks: 1, clicks: 1 });
    assert.ok(types.includes('write_failed'), 'the failed response is on record');
    assert.equal((await record(t)).verdict, 'confirmed');
    // after.png shows the timeout, not the applied state: the confirmed readback pictures what it read.
    assert.deepEqual(await readbackPictures(idempotencyKey(t)), [[evidenceKey(await claimOf(t), 'readback.png')]]);
  });

  test('error_500 before commit: retried once because the policy allows it after a settled negative readback', async () => {
    const t = task('ACME-202611-0003');
    const { types, seen } = await runWithFault(t, { kind: 'error_500', times: 1 });
    assert.deepEqual(seen, { outcome: 'done', marks: 1, clicks: 2 });
    assert.ok(types.indexOf('readback') < types.lastIndexOf('write_started'), 'the retry came after a readback');
  });

  test('error_500 that persists: attempts stop at the policy limit and the item goes to takeover', async () => {
    const t = task('ACME-202611-0004');
    const { seen } = await runWithFault(t, { kind: 'error_500' });
    assert.deepEqual(seen, { outcome: 'takeover', marks: 0, clicks: 2 }, 'two attempts, the policy limit; nothing marked');
    // Each failed attempt's trace is on record with its checksum: a seal takes it from there, since the sealing roles may not read it.
    const failed = (await h.paperclip.services.audit.events(idempotencyKey(t))).filter((e) => e.type === 'write_failed');
    const traces = failed.flatMap((event) =>
      ((event.data['evidence'] ?? []) as Array<{ key: string; sha256: string }>).filter((e) => e.key.endsWith('/trace.zip')),
    );
    assert.ok(failed.length > 0);
    assert.equal(traces.length, failed.length, 'every failed attempt records the trace of its session');
    for (const trace of traces) assert.match(trace.sha256, /^[0-9a-f]{64}$/);
  });

  test('a crash after the click: re-entry on a WRITING claim reads back first and never clicks again', async () => {
    const t = task('ACME-202611-0005', 'T-faults-crash');
    assert.equal((await h.runTask(t)).output['outcome'], 'done');
    // Rewind the claim to what a crash right after the click leaves behind: WRITING, owned by a dead runner.
    const key = idempotencyKey(t);
    await h.paperclip.services.clients.db.send(
      new UpdateCommand({
        TableName: h.paperclip.services.table('claims'),
        Key: { key },
        UpdateExpression: 'SET #s = :w, #o = :dead, leaseUntil = :past',
        ExpressionAttributeNames: { '#s': 'status', '#o': 'owner' },
        ExpressionAttributeValues: {
          ':w': 'WRITING',
          ':dead': 'arn:aws:states:us-east-1:000000000000:execution:gone:crashed',
          ':past': '2020-01-01T00:00:00.000Z',
        },
      }),
    );
    const again = await h.runTask(t);
    assert.equal(again.output['outcome'], 'done');
    assert.equal((await marksOf(t.billNo)).length, 1, 'still exactly one vendor mutation');
    const types = await auditTypes(key);
    assert.ok(types.includes('claim_taken_over'));
    assert.equal(types.filter((x) => x === 'write_started').length, 1);
    // The first run's readback followed a settled write (no picture); the resumed one has no after picture of its own.
    assert.deepEqual(await readbackPictures(key), [[], [evidenceKey(await claimOf(t), 'readback.png')]]);
  });

  test('a commit button its dialog no longer shows: not committed, nothing clicked, the claim never moved to WRITING', async () => {
    const t = task('ACME-202611-0008', 'T-faults-dialog');
    const steps = h.paperclip.services.pack.actions['mark_processed']!.tiers.browser!.steps!;
    const at = steps.findIndex((step) => step.action === 'click' && step.commit);
    const commitClick = steps[at]!;
    // The vendor renamed the dialog's button (确认 → 确定): the dialog opens, the commit step's target is not in it.
    steps[at] = { ...commitClick, target: { role: 'button', name: '确定' } } as typeof commitClick;
    try {
      const result = await h.runTask(t);
      assert.equal(result.output['outcome'], 'takeover');
      assert.match(
        String(result.output['reason']),
        /StructuredContractMissingError: step "click role=button name="确定" within the open dialog"/,
      );
    } finally {
      steps[at] = commitClick;
    }
    assert.deepEqual(await h.control.journal(), []);
    const events = await h.paperclip.services.audit.events(idempotencyKey(t));
    assert.ok(!events.some((e) => e.type === 'write_started'), 'the claim never moved to WRITING');
    const failed = events.filter((e) => e.type === 'write_failed');
    assert.deepEqual(
      failed.map((e) => [e.data['committed'], e.data['error']]),
      [[false, 'StructuredContractMissingError']],
    );
  });

  test('redesign: structured locators fail, the write goes to takeover, zero false successes', async () => {
    const t = task('ACME-202611-0006');
    await h.control.setFaults([{ kind: 'redesign' }]);
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(String(result.output['reason']), /layout|row attribute|StructuredContractMissingError/);
    assert.deepEqual(await marksOf(t.billNo), []);
    const batch = await h.paperclip.runBatch({ taskId: 'T-faults-redesign', tenant: 'acme' });
    assert.equal(batch.status, 'FAILED', 'a batch whose list read failed never ends as a success');
    assert.match(String(batch.error), /StructuredContractMissingError: list\.rows \(table \\?"差异清单\\?"\) found no row/);
    assert.deepEqual(await h.control.journal(), []);
  });

  test('a token the vendor API refuses at routing (401): error before any browser, operators alerted, nothing claimed or retried', async () => {
    // The simulator was reset without initech, so tok-initech is a token it no longer accepts.
    const t = { taskId: 'T-faults-token', tenant: 'initech', billNo: 'INITECH-202611-0001', action: 'mark_processed' };
    const key = idempotencyKey(t);
    const browsers = h.paperclip.services.sessions.stats;
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'error');
    assert.match(String(result.output['reason']), /SessionLostError.*answered 401/);
    assert.deepEqual(h.paperclip.services.sessions.stats, browsers, 'no browser');
    assert.equal(await h.paperclip.services.claims.get(key), undefined, 'never claimed');
    const failed = (await h.paperclip.services.audit.events(key)).filter((e) => e.type === 'routing_failed');
    assert.equal(failed.length, 1, 'recorded once, no retry');
    assert.match(String(failed[0]?.data['reason']), /SessionLostError.*answered 401/);
    const mails = (await h.paperclip.stack.fetchEmails()).filter((m) => m.subject.includes('Routing failed') && m.body.text?.includes(key));
    assert.deepEqual(
      mails.map((m) => m.destination.to),
      [['ops-oncall@ops.example']],
      'operators mailed once',
    );
    assert.deepEqual(await h.control.journal(), []);
  });

  test('an irreversible refund whose pre-state read fails (session gone): takeover naming that read; no approval asked, nothing written', async () => {
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 1, overcharge: 1, processed: 0 }] });
    const bill = (await h.control.state()).bills.find((b) => b.billNo === 'ACME-202611-0002')!;
    assert.equal(bill.kind, 'overcharge');
    // Routing reads the owner through the token API, which the fault leaves alone; the first page the pre-state read opens loses the session.
    await h.control.setFaults([{ kind: 'session_revoked', identity: 'svc-recon-acme' }]);
    const refund = {
      taskId: 'T-faults-prestate',
      tenant: 'acme',
      billNo: bill.billNo,
      action: 'refund',
      params: { amount: (bill.amountCents / 100).toFixed(2) },
    };
    const key = idempotencyKey(refund);
    const mailsBefore = (await h.paperclip.stack.fetchEmails()).length;
    const executionArn = await h.startTask(refund);
    // Bounded: a run that reached its approval instead would wait for a person.
    const settled = await waitUntil('takeover or an approval request', async () => {
      if ((await h.paperclip.services.approvals.byKey(key)).length > 0) return 'approval requested';
      return (await h.paperclip.services.claims.get(key))?.status === 'TAKEOVER' ? 'takeover' : undefined;
    });
    assert.equal(settled, 'takeover');
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover');
    const reason = String(result.output['reason']);
    assert.match(reason, /^SessionLostError: pre-state read of ACME-202611-0002 failed/, reason);
    assert.match(
      reason,
      /the vendor says "权限已变更，请重新登录" — commit click: not clicked; seen: nothing read; verdict: not read back$/,
      reason,
    );
    assert.doesNotMatch(reason, /approv/i, reason);
    assert.deepEqual(await h.paperclip.services.approvals.byKey(key), [], 'no approval requested');
    assert.ok(!(await auditTypes(key)).includes('approval_requested'));
    const mails = (await h.paperclip.stack.fetchEmails()).slice(mailsBefore);
    assert.deepEqual(
      mails.filter((m) => m.subject.includes('待审批')).map((m) => m.subject),
      [],
      'no approval mailed',
    );
    const takeover = await h.paperclip.services.takeovers.get(key);
    assert.match(String(takeover?.reason), /pre-state read/);
    assert.deepEqual(await h.control.journal(), [], 'nothing written');
  });

  test('session_revoked: the item fails loudly without a retry, and other tenants continue', async () => {
    const t = task('ACME-202611-0007');
    await h.control.setFaults([{ kind: 'session_revoked', identity: 'svc-recon-acme' }]);
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(String(result.output['reason']), /SessionLostError/);
    assert.deepEqual(await marksOf(t.billNo), []);
    const rec = await record(t);
    assert.equal(rec.error, 'SessionLostError');
    assert.equal(rec.identity, 'svc-recon-acme');
    const other = await h.runTask(task('GLOBEX-202611-0001'));
    assert.equal(other.output['outcome'], 'done');
    assert.equal((await marksOf('GLOBEX-202611-0001')).length, 1);
  });
});
