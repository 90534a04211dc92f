import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { handler as completeHandler } from '../../lambdas/complete.js';
import { batchKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { startHarness, useHarness } from '../support/embedded.js';
import { recoverOrphanedClaims } from '../../src/app/takeover/recover.js';
import { startNamedExecution } from '../../src/app/takeover/executions.js';

/**
 * Lambda throttles, service errors and timeouts as a real account produces them, injected by the local
 * runner's fault switch into the real workflows (docs/local-stack.md): the Retry and Catch clauses are
 * proven by what the vendor's journal, the claims and the batch summary say, not by reading the ASL.
 */

/** A guarded write whose Complete answers without an outcome: the batch's map child fails (States.Runtime). */
let outcomeLessCompleteFor: string | undefined;

describe('Lambda service faults on the embedded stack', () => {
  const h = useHarness(() =>
    startHarness({
      handlerOverrides: {
        complete: async (event: unknown) => {
          const closed = await completeHandler(event);
          return closed.billNo === outcomeLessCompleteFor ? { billNo: closed.billNo, note: 'no outcome' } : closed;
        },
      },
    }),
  );
  const sfn = () => h.paperclip.stack.stepFunctions;
  beforeEach(async () => {
    sfn().setFaults([]);
    outcomeLessCompleteFor = undefined;
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 8, overcharge: 0, processed: 0 }] });
  });

  const task = (billNo: string, taskId: string) => ({ taskId, tenant: 'acme', billNo, action: 'mark_processed' });
  const marks = async () => (await h.control.journal()).filter((e) => e.action === 'mark');
  const auditTypes = async (key: string) => (await h.paperclip.services.audit.events(key)).map((e) => e.type);

  test('a throttled BrowserWrite is retried (the function never ran): done with one vendor write, no readback before it', async () => {
    sfn().setFaults([{ state: 'BrowserWrite', error: 'Lambda.TooManyRequestsException', count: 2 }]);
    const t = task('ACME-202611-0001', 'T-throttled-write');
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.deepEqual(sfn().faultsFired(), { 'BrowserWrite Lambda.TooManyRequestsException': 2 });
    const journal = (await marks()).filter((e) => e.billNo === t.billNo);
    assert.equal(journal.length, 1, 'exactly one vendor write');
    const key = idempotencyKey(t);
    const types = await auditTypes(key);
    assert.equal(types.filter((x) => x === 'write_started').length, 1);
    assert.equal(
      types.filter((x) => x === 'readback').length,
      1,
      'one readback, after the write: the throttle was not read back as a failed write',
    );
    assert.equal((await h.paperclip.services.claims.get(key))!.attempts, 1, 'no second attempt was needed');
  });

  test('a BrowserWrite that timed out after the click is not retried: readback finds it landed, done once', async () => {
    sfn().setFaults([{ state: 'BrowserWrite', error: 'Sandbox.Timedout', count: 1 }]);
    const t = task('ACME-202611-0002', 'T-timed-out-write');
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
    assert.equal((await marks()).filter((e) => e.billNo === t.billNo).length, 1, 'the click landed once and was never repeated');
    const types = await auditTypes(idempotencyKey(t));
    assert.equal(types.filter((x) => x === 'write_started').length, 1);
  });

  test('a throttle on the first attempt of every Lambda task state: every item of the batch ends with its real outcome', async () => {
    sfn().setFaults([{ state: '*', error: 'Lambda.TooManyRequestsException', count: 1 }]);
    const run = await h.paperclip.runBatch({ taskId: 'T-throttled-batch', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.items, 8);
    assert.equal(run.summary?.counts.done, 8, JSON.stringify(run.summary));
    const journal = await marks();
    assert.equal(journal.length, 8);
    assert.equal(new Set(journal.map((e) => e.billNo)).size, 8, 'one vendor write per bill');
    const claims = await h.paperclip.services.claims.byTask('T-throttled-batch');
    assert.ok(
      claims.every((c) => c.status === 'DONE' && c.attempts === 1),
      'no write was retried through readback',
    );
    const fired = sfn().faultsFired();
    for (const state of ['ReadList', 'ValidateRoute', 'Claim', 'BrowserWrite', 'Readback', 'Complete', 'Summarize']) {
      assert.ok((fired[`${state} Lambda.TooManyRequestsException`] ?? 0) > 0, `${state} was throttled: ${JSON.stringify(fired)}`);
    }
  });

  test('an item error without a Cause is reported as an error; the map run and the summary are unharmed', async () => {
    // Every child's start fails before it runs, with an error output that has no Cause.
    sfn().setFaults([{ state: 'RunGuardedWrite', error: 'States.TaskFailed', cause: null, count: 1 }]);
    const run = await h.paperclip.runBatch({ taskId: 'T-causeless', tenant: 'acme' });
    assert.equal(run.status, 'SUCCEEDED', run.error);
    assert.equal(run.summary?.error, undefined, 'the map run did not fail');
    assert.equal(run.summary?.items, 8);
    assert.equal(run.summary?.counts.error, 8);
    const stored = JSON.parse(
      (await h.paperclip.services.evidence.get(batchKey({ tenant: 'acme', taskId: 'T-causeless' }, 'batch.json')))!.toString(),
    ) as {
      results: Array<{ reason: string }>;
    };
    assert.ok(stored.results.every((r) => r.reason === 'States.TaskFailed'));
    assert.equal((await marks()).length, 0);
  });

  test("a failed map run keeps every result it wrote, and a re-run reports each item's real outcome", async () => {
    const bills = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.status === 'PENDING').map((b) => b.billNo);
    outcomeLessCompleteFor = bills[0];
    const taskId = 'T-failed-map';
    const first = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    // The batch itself succeeds at summarising: the map run's failure is the summary's error, its results are kept.
    assert.match(first.summary?.error ?? '', /ExceedToleratedFailureThreshold/, JSON.stringify(first.summary));
    const ran = first.summary?.items ?? 0;
    assert.ok(ran >= 2, `the results of every child that ran are counted: ${JSON.stringify(first.summary)}`);
    assert.equal(first.summary?.counts.error, 1, 'the child that failed');
    assert.equal(first.summary?.counts.done, ran - 1, 'the others as they ended');

    outcomeLessCompleteFor = undefined;
    const marksBefore = (await marks()).length;
    const again = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
    assert.equal(again.status, 'SUCCEEDED', again.error);
    assert.equal(again.summary?.error, undefined);
    assert.equal(again.summary?.counts.done, 8, `every item by its real outcome, none "skipped": ${JSON.stringify(again.summary)}`);
    assert.equal(again.summary?.counts.skipped, 0);
    assert.equal(again.summary?.settledEarlier, ran, 'the items the first run settled are marked as such');
    const journal = await marks();
    assert.equal(journal.length - marksBefore, 8 - ran, 'the re-run wrote only the items the first run never started');
    assert.equal(new Set(journal.map((e) => e.billNo)).size, journal.length, 'one vendor write per bill');
  });

  // The chaos soak's lost item: a runner killed while an item was routing leaves its key-named execution FAILED with no
  // claim. Every re-run of the task is turned away by that name (skipped), and the orphan recovery looked only at claims.
  test('an item whose execution died before anything claimed it is restarted by recovery: done once, not skipped forever', async () => {
    const t = task('ACME-202611-0003', 'T-died-unclaimed');
    const key = idempotencyKey(t);
    const s = h.paperclip.services;
    // Claim refused before the function runs, past every retry: the execution fails with no claim and nothing written.
    sfn().setFaults([{ state: 'Claim', error: 'Lambda.ServiceException', count: 20 }]);
    const arn = await startNamedExecution(s, key, { ...t, params: {}, requestedBy: 'schedule' });
    const dead = await s.executions.wait(arn, { timeoutMs: 60_000 });
    assert.equal(dead.status, 'FAILED', JSON.stringify(dead));
    sfn().setFaults([]);
    assert.equal(await s.claims.get(key), undefined, 'nothing claimed it');
    await assert.rejects(
      startNamedExecution(s, key, { ...t, params: {}, requestedBy: 'schedule' }),
      /already exists/i,
      'a re-run is turned away by the name',
    );

    const recovered = await recoverOrphanedClaims(s, { taskIds: [t.taskId] });
    assert.deepEqual(
      recovered.map((r) => [r.key, r.from, r.execution?.outcome]),
      [[key, 'UNCLAIMED', 'done']],
      JSON.stringify(recovered),
    );
    assert.equal((await s.claims.get(key))?.status, 'DONE');
    assert.equal((await marks()).filter((e) => e.billNo === t.billNo).length, 1, 'written once');
    const resumed = (await h.paperclip.services.audit.events(key)).find((e) => e.type === 'orphan_resumed');
    assert.equal(resumed?.data['claimStatus'], 'UNCLAIMED');
    assert.deepEqual(await recoverOrphanedClaims(s, { taskIds: [t.taskId] }), [], 'nothing left to recover');
  });
});
