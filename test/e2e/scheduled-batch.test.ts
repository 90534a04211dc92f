import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { scheduleRequester } from '../../src/workflow/schedule-requester.js';
import { useHarness } from '../support/embedded.js';

/**
 * The schedule's requester is proven, not asserted: a batch credited to a tenant's schedule runs only when the
 * schedules' entry point (start-scheduled-batch, which attests it) started it. On the enforcing twin: whoever
 * else starts the batch naming the schedule is refused by ReadList before anything is read, claimed or written;
 * no role but the entry point's may start the batch workflow at all (the scheduler's role may only invoke the
 * entry point); and the entry point's own start, run as its deployed role, runs the batch.
 */
describe('scheduled batches on the embedded stack', () => {
  const h = useHarness();
  const seed = { seed: 11, tenants: [{ id: 'acme', pending: 2, overcharge: 0, processed: 0 }] };
  // The journal holds the vendor's mutations (mark, unmark, refund, note), nothing a read leaves.
  const mutations = async () => h.control.journal();

  test('a batch started by anyone else, naming the schedule as requester, is refused with nothing claimed or written', async () => {
    await h.control.reset(seed);
    const prefix = h.paperclip.services.config.prefix;
    const taskId = 'T-acme-2026-12-01T010000Z';
    const started = await h.paperclip.services.clients.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: h.paperclip.arns.batch,
        name: 'forged-schedule-start',
        input: JSON.stringify({ tenant: 'acme', taskId, requestedBy: scheduleRequester(prefix, 'acme') }),
      }),
    );
    const run = await h.waitForExecution(started.executionArn!);
    assert.match(JSON.stringify(run.output), /batch\.requestedBy: the requester is not attested by an entry point/);
    assert.equal((await h.paperclip.services.claims.byTask(taskId)).length, 0, 'no claim');
    assert.deepEqual(await mutations(), [], 'no vendor write');
    const bills = (await h.control.state()).bills.filter((b) => b.tenant === 'acme');
    assert.ok(bills.length > 0 && bills.every((b) => b.status !== 'PROCESSED'), 'every bill as it was');
  });

  test("no role but the entry point's may start the batch workflow: the scheduler's and the workflow functions' are denied", async () => {
    const { iam, arns, services } = h.paperclip;
    const start = () =>
      services.clients.sfn.send(
        new StartExecutionCommand({ stateMachineArn: arns.batch, name: `denied-${Date.now()}`, input: JSON.stringify({}) }),
      );
    const scheduler = [...iam.catalog.roles.values()].find((r) => r.name.endsWith('-SchedulesRole'));
    assert.ok(scheduler, 'the deployed IAM has the scheduler role');
    await assert.rejects(
      iam.runAsSession({ RoleArn: scheduler.arn, RoleSessionName: 'scheduler' }, start),
      (error: Error) => error.name === 'AccessDeniedException' && /states:StartExecution/.test(error.message),
    );
    for (const fn of ['read-list', 'validate-route', 'compensate', 'takeover', 'summarize-batch', 'approval-http']) {
      await assert.rejects(
        iam.runAsFunction(fn, start),
        (error: Error) => error.name === 'AccessDeniedException' && /states:StartExecution/.test(error.message),
        fn,
      );
    }
  });

  test("the entry point's start runs the batch credited to the schedule; a duplicated delivery joins it", async () => {
    await h.control.reset(seed);
    const prefix = h.paperclip.services.config.prefix;
    const tick = { tenant: 'acme', scheduledTime: '2026-12-02T01:00:00Z' };
    const started = await h.paperclip.startScheduledBatch(tick);
    assert.equal(started.taskId, 'T-acme-2026-12-02T010000Z');
    assert.equal(started.requestedBy, scheduleRequester(prefix, 'acme'));
    const again = await h.paperclip.startScheduledBatch(tick);
    assert.equal(again.executionArn, started.executionArn, 'the same tick is the same execution');

    const run = await h.waitForExecution(started.executionArn);
    assert.equal(run.status, 'SUCCEEDED');
    const claims = await h.paperclip.services.claims.byTask(started.taskId);
    assert.equal(claims.length, 2);
    assert.ok(claims.every((c) => c.status === 'DONE'));
    const marks = (await h.control.journal()).filter((e) => e.action === 'mark');
    assert.equal(marks.length, 2, 'one write per pending bill');
    for (const claim of claims) {
      const requesters = (await h.paperclip.services.audit.events(claim.key))
        .map((e) => (e.data?.['item'] as { requestedBy?: string } | undefined)?.requestedBy)
        .filter((r) => r !== undefined);
      assert.ok(requesters.length > 0, `${claim.billNo}: the audit trail names its requester`);
      assert.ok(
        requesters.every((r) => r === scheduleRequester(prefix, 'acme')),
        `${claim.billNo}: credited to the schedule (${requesters.join(', ')})`,
      );
    }
  });
});
