import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compensate } from '../../src/app/compensation.js';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { runDrill, type DrillResult } from '../../src/cli/drill.js';
import { LEDGERLY } from '../support/back-offices.js';
import { GetExecutionHistoryCommand, type HistoryEvent } from '@aws-sdk/client-sfn';
import { startHarness, startLedgerlyHarness, useHarness, type Harness } from '../support/embedded.js';
import { handler as readback } from '../../lambdas/readback.js';
import { approvalRequestFor, executionStatus, linkFromInbox, openLink, postDecision, APPROVERS } from '../approvals/helpers.js';
import { refundBehindOurBack, runCli, stackEnvironment } from './helpers.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Tasks whose id starts with this land "somewhere unintended": their readback (not the inverse's) asks for compensation. */
const LANDS_ELSEWHERE = 'T-lands-elsewhere';

async function historyOf(h: Harness, executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await h.paperclip.services.clients.sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

/** Functions invoked by the execution that have not ended: a function waiting would show here. */
function functionsRunning(events: HistoryEvent[]): number {
  const count = (...types: string[]) => events.filter((e) => types.includes(e.type ?? '')).length;
  return count('LambdaFunctionStarted') - count('LambdaFunctionSucceeded', 'LambdaFunctionFailed', 'LambdaFunctionTimedOut');
}

/** The nested-execution task (startExecution.sync:2) events of the execution, by type. */
function nestedRunEvents(events: HistoryEvent[]): string[] {
  return events
    .filter((e) => {
      const details = e.taskSubmittedEventDetails ?? e.taskSucceededEventDetails ?? e.taskScheduledEventDetails;
      return details?.resourceType === 'states' && details.resource === 'startExecution.sync:2';
    })
    .map((e) => e.type ?? '');
}

/**
 * What a compensated write leaves, on any back office: the way back (the pre-state, which is the inverse's target, and
 * the inverse) registered with the claim and in the trail before the way in, the rollback after the write, and the
 * inverse run through the same guarded path, with its own claim (done) and evidence. Returns the inverse's key.
 */
async function assertCompensatedThroughInverse(
  services: Harness['paperclip']['services'],
  write: Pick<DrillResult, 'key' | 'taskId' | 'tenant' | 'billNo'>,
  inverse: { action: string; targetStatus: string },
): Promise<string> {
  const claim = await services.claims.get(write.key);
  assert.equal(claim?.preState?.status, inverse.targetStatus);
  assert.deepEqual(claim?.inverse, inverse);
  const events = await services.audit.events(write.key);
  const seq = (type: string) => events.find((e) => e.type === type)?.seq ?? -1;
  assert.ok(seq('pre_state_registered') > 0 && seq('pre_state_registered') < seq('write_started'), events.map((e) => e.type).join(', '));
  assert.deepEqual(events.find((e) => e.type === 'pre_state_registered')?.data['inverse'], inverse);
  assert.ok(seq('completed') < seq('compensation_started') && seq('compensation_started') < seq('compensated'));

  const inverseKey = idempotencyKey({ taskId: write.taskId, tenant: write.tenant, billNo: write.billNo, action: inverse.action });
  assert.equal((await services.claims.get(inverseKey))?.status, 'DONE');
  const objects = await services.evidence.list(evidenceKey({ tenant: write.tenant, taskId: write.taskId, key: inverseKey }, ''));
  for (const name of ['before.png', 'after.png', 'record.json']) {
    assert.ok(
      objects.some((o) => o.endsWith(`/${name}`)),
      `the inverse has ${name}`,
    );
  }
  return inverseKey;
}

/**
 * The real readback, except that for the tasks above it reports a settled
 * state that is neither the pre-state nor the target, which is what sends
 * the workflow to its Compensate path; the vendor keeps the write, so the
 * inverse has something real to undo.
 */
async function readbackLandingElsewhere(event: unknown): Promise<unknown> {
  const outcome = (await readback(event)) as Record<string, unknown>;
  const item = (event as { item: { taskId: string; compensates?: string } }).item;
  if (!item.taskId.startsWith(LANDS_ELSEWHERE) || item.compensates) return outcome;
  return { ...outcome, verdict: 'unknown', next: 'compensate', why: 'the item settled on a status nobody asked for: undo it' };
}

/**
 * Compensation end to end: the pre-state and inverse registered before the
 * write, the inverse run through the same guarded path (its own claim,
 * evidence and readback), the vendor state in the simulator, and the rollback
 * outcome in the audit trail.
 */
describe('compensation', () => {
  const h = useHarness(() => startHarness({ handlerOverrides: { readback: readbackLandingElsewhere } }));

  const statusOf = async (billNo: string) => (await h.control.state()).bills.find((b) => b.billNo === billNo)?.status;
  const journalOf = async (billNo: string) => (await h.control.journal()).filter((e) => e.billNo === billNo).map((e) => e.action);
  const types = async (key: string) => (await h.paperclip.services.audit.events(key)).map((e) => e.type);

  test('the drill executes mark_processed, undoes it, and finds the vendor state back where it was', async () => {
    await h.control.reset();
    const result = await runDrill(h.paperclip.services, { tenant: 'acme', taskId: 'T-drill-function' });
    assert.equal(result.drill, 'passed', JSON.stringify(result));
    assert.equal(result.billNo, 'ACME-202611-0001', 'the first pending mismatch');
    assert.equal(result.readSource, 'api', 'read through another channel than the guarded path');
    assert.deepEqual([result.before, result.afterWrite, result.after], ['PENDING', 'PROCESSED', 'PENDING']);
    assert.equal(await statusOf(result.billNo), 'PENDING');
    assert.deepEqual(await journalOf(result.billNo), ['mark', 'unmark']);

    // The way back registered before the way in; the inverse through the guarded path, with its own claim and evidence.
    const inverseKey = await assertCompensatedThroughInverse(h.paperclip.services, result, {
      action: 'unmark_processed',
      targetStatus: 'PENDING',
    });
    assert.ok((await types(inverseKey)).includes('readback'));

    // Asking again reports the earlier rollback and writes nothing.
    const again = await compensate(h.paperclip.services, { key: result.key, requestedBy: 'ops@acme.example', reason: 'asked twice' });
    assert.equal(again.rolledBack, true);
    assert.equal(again.alreadyCompensated, true);
    assert.deepEqual(await journalOf(result.billNo), ['mark', 'unmark']);
  });

  test('an operator compensates a write with paperclip compensate: the pre-state is restored and the rollback recorded', async () => {
    await h.control.reset();
    const task = { taskId: 'T-operator-undo', tenant: 'acme', billNo: 'ACME-202611-0002', action: 'mark_processed' };
    const key = idempotencyKey(task);
    assert.equal((await h.runTask(task)).output['outcome'], 'done');
    assert.equal(await statusOf(task.billNo), 'PROCESSED');

    const run = await runCli(
      ['compensate', key, '--reason', '标错了 marked by mistake', '--requested-by', 'ops@acme.example'],
      stackEnvironment(h),
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.equal(result.rolledBack, true);
    assert.equal(result.preStatus, 'PENDING');
    assert.equal(result.restoredStatus, 'PENDING');
    assert.equal(await statusOf(task.billNo), 'PENDING');
    assert.deepEqual(await journalOf(task.billNo), ['mark', 'unmark']);
    const events = await h.paperclip.services.audit.events(key);
    const started = events.find((e) => e.type === 'compensation_started');
    assert.equal(started?.actor, 'ops@acme.example');
    assert.equal(started?.data['reason'], '标错了 marked by mistake');
    assert.equal(events.at(-1)?.type, 'compensated');

    const [unknown, noReason] = await Promise.all([
      runCli(['compensate', `k-acme_${'0'.repeat(32)}`, '--reason', 'no such write'], stackEnvironment(h)),
      runCli(['compensate', key], stackEnvironment(h)),
    ]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /refused: there is no write with key/);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /--reason/);
  });

  test('a re-run of a task after one of its writes was compensated reports that item compensated, not done, and writes nothing', async () => {
    await h.control.reset({ seed: 7, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] });
    const taskId = 'T-undo-rerun';
    const first = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    assert.equal(first.status, 'SUCCEEDED', first.error);
    assert.equal(first.summary?.counts.done, 2);
    const [undone, kept] = (await h.paperclip.services.claims.byTask(taskId)).sort((a, b) => a.billNo.localeCompare(b.billNo));
    const rollback = await compensate(h.paperclip.services, {
      key: undone!.key,
      requestedBy: 'ops@acme.example',
      reason: 'marked by mistake',
    });
    assert.equal(rollback.rolledBack, true);

    const again = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    assert.equal(again.status, 'SUCCEEDED', again.error);
    assert.equal(again.summary?.counts.compensated, 1, 'the DONE claim stays, but the audit trail says it was rolled back');
    assert.equal(again.summary?.counts.done, 1);
    assert.equal(again.summary?.settledEarlier, 2);
    assert.deepEqual(await journalOf(undone!.billNo), ['mark', 'unmark'], 'the re-run clicked nothing');
    assert.deepEqual(await journalOf(kept!.billNo), ['mark']);
  });

  test('a write that lands somewhere unintended is compensated by the workflow, and a failed rollback is recorded and handed to a person', async () => {
    await h.control.reset();
    const billNo = 'ACME-202611-0013';
    const bill = (await h.control.state()).bills.find((b) => b.billNo === billNo)!;
    // The mark stays PROCESSING long enough for someone else's refund to become the write that settles.
    await h.control.setFaults([{ kind: 'async_delay_ms', bill: billNo, ms: 6000 }]);
    const task = { taskId: 'T-auto-compensate', tenant: 'acme', billNo, action: 'mark_processed' };
    const key = idempotencyKey(task);
    const executionArn = await h.startTask(task);
    for (let i = 0; !(await journalOf(billNo)).includes('mark'); i++) {
      assert.ok(i < 600, 'the mark was never committed');
      await sleep(200);
    }
    await refundBehindOurBack(h, billNo, (bill.amountCents / 100).toFixed(2));

    const result = await h.waitForExecution(executionArn);
    await h.control.setFaults([]);
    assert.equal(result.output['outcome'], 'takeover');
    assert.match(String(result.output['reason']), /settled on REFUNDED.*compensation failed/);
    assert.equal(await statusOf(billNo), 'REFUNDED');
    assert.deepEqual(await journalOf(billNo), ['mark', 'refund'], 'the inverse did not click on a refunded bill');
    const events = await types(key);
    const at = (type: string) => events.indexOf(type);
    assert.ok(
      at('readback') < at('compensation_started') &&
        at('compensation_started') < at('compensation_failed') &&
        at('compensation_failed') < at('takeover'),
      events.join(', '),
    );
    const failed = (await h.paperclip.services.audit.events(key)).find((e) => e.type === 'compensation_failed');
    assert.equal(failed?.data['outcome'], 'stale', 'the inverse found the bill in a state it does not apply to');
    assert.equal((await h.paperclip.services.claims.get(key))?.status, 'TAKEOVER');
  });
  test('the workflow runs the inverse as a nested execution it waits for: verified by its readback, the write is compensated', async () => {
    await h.control.reset();
    const task = { taskId: `${LANDS_ELSEWHERE}-1`, tenant: 'acme', billNo: 'ACME-202611-0003', action: 'mark_processed' };
    const key = idempotencyKey(task);
    const inverseKey = idempotencyKey({ ...task, action: 'unmark_processed' });
    assert.equal(await statusOf(task.billNo), 'PENDING');

    const executionArn = await h.startTask(task);
    const result = await h.waitForExecution(executionArn);
    assert.equal(result.output['outcome'], 'takeover', 'undone, then handed to a person');
    // The workflow waited for the inverse's execution itself; no function did.
    assert.deepEqual(nestedRunEvents(await historyOf(h, executionArn)), ['TaskScheduled', 'TaskSubmitted', 'TaskSucceeded']);
    assert.match(String(result.output['reason']), /compensation rolled it back \(verified by readback\)/);
    assert.equal(await statusOf(task.billNo), 'PENDING');
    assert.deepEqual(await journalOf(task.billNo), ['mark', 'unmark']);
    const compensated = (await h.paperclip.services.audit.events(key)).find((e) => e.type === 'compensated');
    assert.equal(compensated?.data['outcome'], 'done');
    assert.equal(compensated?.data['restoredStatus'], 'PENDING');
    // The inverse ran as a guarded-write execution of its own, named by its key, with its own claim and readback.
    assert.match(String(compensated?.data['executionArn']), new RegExp(`:execution:[^:]+:${inverseKey}$`));
    assert.equal((await h.paperclip.services.claims.get(inverseKey))?.status, 'DONE');
    assert.ok((await types(inverseKey)).includes('readback'));
  });

  test('an inverse that needs approval waits for it while the workflow waits, and runs once approved: compensated, not timed out', async () => {
    await h.control.reset();
    const task = { taskId: `${LANDS_ELSEWHERE}-2`, tenant: 'acme', billNo: 'ACME-202611-0004', action: 'mark_processed' };
    const key = idempotencyKey(task);
    const inverseKey = idempotencyKey({ ...task, action: 'unmark_processed' });
    // Policy for this case: undoing a mark needs a person's approval (the handlers read the same config object).
    const required = h.paperclip.services.config.write_policy.approval_required;
    required.push('unmark_processed');
    try {
      const executionArn = await h.startTask(task);
      const request = await approvalRequestFor(h, inverseKey);
      // Nothing times out while the approver takes their time; the mark stays until then.
      await sleep(1500);
      assert.equal(await executionStatus(h, executionArn), 'RUNNING');
      assert.ok(!(await types(key)).some((t) => ['compensation_failed', 'compensated', 'takeover'].includes(t)), (await types(key)).join());
      assert.equal(await statusOf(task.billNo), 'PROCESSED');
      // The wait is the workflow's (a nested execution submitted), not a function polling until its timeout.
      const waiting = await historyOf(h, executionArn);
      assert.equal(functionsRunning(waiting), 0, 'no function is running while the inverse waits');
      assert.deepEqual(nestedRunEvents(waiting), ['TaskScheduled', 'TaskSubmitted']);

      const link = await linkFromInbox(h, request.approvalId, APPROVERS[0]);
      const page = await openLink(link);
      assert.equal(page.status, 200);
      const decided = await postDecision(h, link, { ...page.fields, decision: 'approve' }, { cookie: page.cookie! });
      assert.equal(decided.status, 200, decided.html);

      const result = await h.waitForExecution(executionArn);
      assert.match(String(result.output['reason']), /compensation rolled it back \(verified by readback\)/);
      assert.equal(await statusOf(task.billNo), 'PENDING');
      assert.deepEqual(await journalOf(task.billNo), ['mark', 'unmark']);
      const trail = await types(key);
      assert.ok(trail.indexOf('compensation_started') < trail.indexOf('compensated'), trail.join());
      assert.ok(!trail.includes('compensation_failed'), trail.join());
      assert.ok((await types(inverseKey)).includes('approved'));
    } finally {
      required.splice(required.indexOf('unmark_processed'), 1);
    }
  });
});

/**
 * The same way back on Ledgerly, whose resolve is two vendor writes (the reason
 * saved in a modal, then Resolve, then an async review) and whose inverse is
 * Reopen from a More menu: the inverse runs through the guarded path with its
 * own claim, evidence and readback through the cookie-authenticated API.
 */
describe('compensation on Ledgerly', () => {
  const h = useHarness(startLedgerlyHarness);

  const journalOf = async (billNo: string) => (await h.control.journal()).filter((e) => e.billNo === billNo).map((e) => e.action);
  const stateOf = async (billNo: string) => (await h.control.state()).discrepancies.find((d) => d.id === billNo)?.state;

  test('the drill resolves a billing error, reopens it through the guarded path, and finds it Open again', async () => {
    await h.control.reset();
    const [firstError] = LEDGERLY.pending('acme').reversible;
    const result = await runDrill(h.paperclip.services, { tenant: 'acme', action: 'resolve', taskId: 'T-ledgerly-drill' });
    assert.equal(result.drill, 'passed', JSON.stringify(result));
    assert.equal(result.billNo, firstError, 'the first open billing error');
    assert.equal(result.readSource, 'api', 'read through the JSON API, not the pages the writes used');
    assert.deepEqual([result.before, result.afterWrite, result.after], ['OPEN', 'RESOLVED', 'OPEN']);
    assert.equal(await stateOf(result.billNo), 'open');
    assert.deepEqual(
      await journalOf(result.billNo),
      [...LEDGERLY.journalActions.reversible, ...LEDGERLY.journalActions.inverse],
      'reason saved, resolved, reopened: once each',
    );

    const inverseKey = await assertCompensatedThroughInverse(h.paperclip.services, result, { action: 'reopen', targetStatus: 'OPEN' });
    const inverseEvents = await h.paperclip.services.audit.events(inverseKey);
    const readback = inverseEvents.find((e) => e.type === 'readback');
    assert.equal(readback?.data['verdict'], 'confirmed');
    assert.equal(readback?.data['source'], 'api');

    const again = await compensate(h.paperclip.services, { key: result.key, requestedBy: 'ops@acme.example', reason: 'asked twice' });
    assert.equal(again.alreadyCompensated, true);
    assert.deepEqual(await journalOf(result.billNo), ['edit', 'resolve', 'reopen'], 'asking again wrote nothing');
  });
});
