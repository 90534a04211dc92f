import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startHarness, type Harness } from '../support/embedded.js';
import { localConfigVariant } from '../support/config-variant.js';
import type { RequestTiming } from '../../backoffices/kit/schemas.js';

/**
 * The per-identity cap on vendor sessions across batches (docs/deploy.md, "Vendor sessions per identity"): two
 * batches of one tenant started at once, with `vendor_sessions.max_per_identity: 1`. The simulator's request log
 * names the vendor session of every request: no request of one session of the identity may overlap a request of
 * another, and the journal shows every item written once.
 */
describe('one vendor session at a time per identity, across two batches at once', () => {
  const config = localConfigVariant('session-cap', {
    config: (c) => {
      c['vendor_sessions'] = { max_per_identity: 1 };
    },
  });
  let h: Harness;
  before(async () => {
    h = await startHarness({ configPath: config.path });
  });
  after(async () => {
    await h?.stop();
    config.remove();
  });

  test('two batches of the same identity never have two sessions at work at once, and every item is done once', async () => {
    await h.control.reset({ seed: 11, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
    // Every vendor answer takes a while, so two sessions at work at once cannot miss each other in the request log.
    await h.control.setFaults([{ kind: 'slow_ms', ms: 250 }]);
    const pending = (await h.control.state()).bills.filter((b) => b.tenant === 'acme' && b.status === 'PENDING').map((b) => b.billNo);
    assert.equal(pending.length, 3);

    const [first, second] = await Promise.all([
      h.paperclip.runBatch({ taskId: 'T-e2e-cap-a', tenant: 'acme' }),
      h.paperclip.runBatch({ taskId: 'T-e2e-cap-b', tenant: 'acme' }),
    ]);
    assert.equal(first.status, 'SUCCEEDED', first.error);
    assert.equal(second.status, 'SUCCEEDED', second.error);

    // The two batches ran at the same time (each started before the other ended).
    const span = async (arn: string) => {
      const d = await h.paperclip.services.clients.sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
      return { start: d.startDate!.getTime(), stop: d.stopDate!.getTime() };
    };
    const [a, b] = [await span(first.executionArn), await span(second.executionArn)];
    assert.ok(a.start < b.stop && b.start < a.stop, 'the batches overlapped in time');

    // Every request of the identity that came with a vendor session, as the simulator logged it.
    const requests = (await h.control.timings()).filter((t) => t.identity === 'svc-recon-acme' && t.sessionId !== undefined);
    const sessions = new Set(requests.map((t) => t.sessionId));
    assert.ok(sessions.size >= 2, `the identity logged in more than once (act and readback): ${sessions.size} session(s)`);
    const overlapping = overlappingPairs(requests);
    assert.deepEqual(overlapping, [], 'no two sessions of the identity were at work at the same time');

    // Every item written once, whichever batch wrote it; nothing failed.
    const marks = (await h.control.journal()).filter((e) => e.action === 'mark');
    assert.deepEqual(marks.map((e) => e.billNo).sort(), [...pending].sort(), 'each pending bill marked exactly once');
    for (const run of [first, second]) {
      assert.equal(run.summary?.counts.error ?? 0, 0, JSON.stringify(run.summary));
      assert.equal(run.summary?.counts.takeover ?? 0, 0, JSON.stringify(run.summary));
    }
    assert.equal((first.summary?.counts.done ?? 0) + (second.summary?.counts.done ?? 0), 3, 'three items done between the two');
    const state = await h.control.state();
    assert.equal(state.bills.filter((bill) => bill.tenant === 'acme' && bill.status === 'PROCESSED').length, 3);

    // The cap's own records: one slot for acme's identity, given back at the end.
    const slots = await h.paperclip.services.clients.db.send(
      new ScanCommand({
        TableName: h.paperclip.services.table('claims'),
        FilterExpression: '#k = :slot',
        ExpressionAttributeNames: { '#k': 'kind' },
        ExpressionAttributeValues: { ':slot': 'session-slot' },
      }),
    );
    assert.deepEqual(
      (slots.Items ?? []).map((s) => ({ tenant: s['tenant'], identity: s['identity'], slot: s['slot'], held: s['holder'] !== undefined })),
      [{ tenant: 'acme', identity: 'svc-recon-acme', slot: 0, held: false }],
    );
  });
});

/** Pairs of requests of different sessions whose [start, end] intervals overlap, named for the failure message. */
function overlappingPairs(requests: readonly RequestTiming[]): string[] {
  const spans = requests.map((t) => {
    const start = Date.parse(t.startedAt);
    return { session: t.sessionId!, start, end: start + t.durationMs, what: `${t.method} ${t.path}` };
  });
  spans.sort((x, y) => x.start - y.start);
  const found: string[] = [];
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length && spans[j]!.start < spans[i]!.end; j++) {
      if (spans[j]!.session !== spans[i]!.session)
        found.push(`${spans[i]!.what} (${spans[i]!.session}) with ${spans[j]!.what} (${spans[j]!.session})`);
    }
  }
  return found;
}
