import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseBatch, storeBatchItems, type BatchItem } from '../../src/app/batch.js';
import { useServices } from '../../src/app/services.js';
import { attestedTask } from '../../src/app/requester.js';
import { handler as validateRoute } from '../../lambdas/validate-route.js';
import { handler as summarizeBatch } from '../../lambdas/summarize-batch.js';
import { batchKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import type { Claim } from '../../src/domain/claim.js';
import { parseSeal } from '../../src/evidence/seal.js';
import { localConfigVariant } from '../support/config-variant.js';
import { startHarness, type Harness } from '../support/embedded.js';

// The batch workflow at scale, through the real batch ASL on the local Step Functions runner
// (Distributed Map, S3 item list and results, enforced payload/history limits). No browser:
// ReadList is replaced by one that stores a prepared item list the way ReadList stores it,
// and every item's claim is already settled, so each item is routed and claimed, never written.

let h: Harness;
/** The items the next batch's ReadList hands over. */
let nextItems: BatchItem[] = [];
/** Bills whose routing fails as if the vendor API were down (the simulator's API has no fault for reads). */
const unreachable = new Set<string>();
/** Makes the next summary fail as a timeout or an S3 outage would (its SummarizeFailed step still runs for real). */
let failNextSummary = false;

const config = temporaryConfig();

/** The local config with the widest item concurrency the schema allows, as a deployment running big batches would set. */
function temporaryConfig(): { path: string; remove(): void } {
  return localConfigVariant('batch-scale', {
    config: (config) => {
      config['limits'] = { ...(config['limits'] ?? {}), max_batch_items: 10_000, max_concurrency: 40 };
      // As many vendor sessions as items at once: this test measures the batch, not the per-identity cap.
      config['vendor_sessions'] = { max_per_identity: 40 };
    },
  });
}

before(async () => {
  h = await startHarness({
    configPath: config.path,
    inMemory: true,
    handlerOverrides: {
      'validate-route': async (event: unknown) => {
        const billNo = (event as { task?: { billNo?: string } }).task?.billNo ?? '';
        if (unreachable.has(billNo))
          throw Object.assign(new Error(`vendor API unreachable reading ${billNo}`), { name: 'VendorUnavailableError' });
        return validateRoute(event);
      },
      'summarize-batch': async (event: unknown) => {
        if (failNextSummary && !(event as { summarizeError?: unknown }).summarizeError) {
          failNextSummary = false;
          throw Object.assign(new Error('S3 answered 503 SlowDown reading the map run results'), { name: 'SlowDown' });
        }
        return summarizeBatch(event);
      },
      'read-list': async (event: unknown) => {
        const { batch, executionArn } = event as { batch: unknown; executionArn: string };
        const services = h.paperclip.services;
        // Attested for each child execution (named by its key), as the real ReadList hands items over.
        const items = await Promise.all(nextItems.map(async (i) => ({ ...i, task: await attestedTask(services, i.task, i.key) })));
        // Stored as the real ReadList stores it: through the tenant's session (the read-list role itself may not write runs/).
        const tenant = services.forTenant({ tenant: 'acme', identity: 'svc-recon-acme' });
        return storeBatchItems(tenant, { batch: parseBatch(batch), read: items.length, items, executionArn });
      },
    },
  });
  useServices(h.paperclip.services);
});

after(async () => {
  await h?.stop();
  config.remove();
});

function item(taskId: string, billNo: string, action = 'mark_processed'): BatchItem {
  const task = { taskId, tenant: 'acme', billNo, action, requestedBy: 'schedule', params: {} };
  return { key: idempotencyKey(task), needsApproval: false, task };
}

/** Claims as an earlier run left them: DONE, so Claim decides 'skip' without a browser. */
async function settle(items: BatchItem[]): Promise<void> {
  const now = new Date().toISOString();
  const claims = h.paperclip.services.claims;
  for (let i = 0; i < items.length; i += 50) {
    await Promise.all(
      items.slice(i, i + 50).map(({ key, task }) => {
        const claim: Claim = {
          key,
          taskId: task.taskId,
          tenant: task.tenant,
          billNo: task.billNo,
          action: task.action,
          identity: 'svc-recon-acme',
          owner: 'arn:aws:states:us-east-1:000000000000:execution:earlier:run',
          status: 'DONE',
          version: 1,
          leaseUntil: now,
          attempts: 1,
          createdAt: now,
          updatedAt: now,
        };
        return claims.tryCreate(claim);
      }),
    );
  }
}

async function sealOf(tenant: string, taskId: string) {
  const { seal, problem } = parseSeal(await h.paperclip.services.evidence.get(batchKey({ tenant, taskId }, 'seal.json')));
  assert.ok(seal, `seal of ${tenant}/${taskId}: ${problem}`);
  return seal;
}

test('a rejected item and a routing failure are summarised with the rest, and the batch is sealed in its scheduled folder', async () => {
  await h.control.reset({ tenants: [{ id: 'acme', pending: 0, overcharge: 0, processed: 5 }] });
  const acme = (await h.control.state()).bills.filter((b) => b.tenant === 'acme').map((b) => b.billNo);
  // A scheduler fills in the time with colons; the folder is the same id without them.
  const scheduled = 'T-acme-2026-12-02T01:00:00Z';
  const taskId = parseBatch({ taskId: scheduled, tenant: 'acme' }).taskId;
  const settled = acme.slice(0, 3).map((billNo) => item(taskId, billNo));
  await settle(settled);
  const refused = item(taskId, acme[4]!, 'delete_bill'); // an action the policy does not know: routing rejects it
  const unroutable = item(taskId, acme[3]!); // the vendor API fails while routing
  unreachable.add(acme[3]!);
  nextItems = [...settled, refused, unroutable];

  const run = await h.paperclip.runBatch({ taskId: scheduled, tenant: 'acme' });
  unreachable.clear();
  assert.equal(run.status, 'SUCCEEDED', run.error);
  assert.equal(run.summary?.task, taskId);
  assert.equal(run.summary?.items, 5);
  // Settled earlier (their claims are DONE): reported by that outcome, not as skipped.
  assert.equal(run.summary?.counts.done, 3);
  assert.equal(run.summary?.settledEarlier, 3);
  assert.equal(run.summary?.counts.rejected, 1);
  assert.equal(run.summary?.counts.error, 1);

  const stored = JSON.parse((await h.paperclip.services.evidence.get(batchKey({ tenant: 'acme', taskId }, 'batch.json')))!.toString()) as {
    results: Array<{ billNo: string; outcome: string }>;
  };
  const byBill = Object.fromEntries(stored.results.map((r) => [r.billNo, r.outcome]));
  assert.equal(byBill[acme[4]!], 'rejected');
  assert.equal(byBill[acme[3]!], 'error');
  const seal = await sealOf('acme', taskId);
  assert.ok(
    seal.batchObjects.some((o) => o.name === 'batch.json'),
    'the seal covers the summary in the batch folder',
  );
  assert.deepEqual(
    settled.map((i) => i.key).filter((k) => !seal.items.some((s) => s.key === k)),
    [],
    'every settled item is in the seal',
  );
});

test('2,000 items whose claims are already settled run through the Distributed Map, are summarised and sealed within the enforced limits', async () => {
  const count = 2000;
  await h.control.reset({ tenants: [{ id: 'acme', pending: 0, overcharge: 0, processed: count }] });
  const bills = (await h.control.state()).bills.filter((b) => b.tenant === 'acme').map((b) => b.billNo);
  assert.equal(bills.length, count);
  const taskId = 'T-acme-scale-2000';
  const items = bills.map((billNo) => item(taskId, billNo));
  await settle(items);
  nextItems = items;

  // The local runner enforces 256 KiB per state and 25,000 history events per execution, as AWS does:
  // the batch execution succeeds only if neither the map's state nor its history grows with the item count.
  const run = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
  assert.equal(run.status, 'SUCCEEDED', run.error);
  assert.equal(run.summary?.items, count);
  assert.equal(run.summary?.counts.done, count);
  assert.equal(run.summary?.settledEarlier, count);

  const seal = await sealOf('acme', taskId);
  const sealed = new Set(seal.items.map((s) => s.key));
  assert.deepEqual(
    items.map((i) => i.key).filter((k) => !sealed.has(k)),
    [],
    'every item is in the seal',
  );
  assert.ok(
    seal.batchObjects.some((o) => o.name === 'batch.json'),
    'the seal covers the summary',
  );
});

test('a failed summary is caught: recorded in the batch folder, operators mailed, and the execution fails', async () => {
  await h.control.reset({ tenants: [{ id: 'acme', pending: 0, overcharge: 0, processed: 2 }] });
  const acme = (await h.control.state()).bills.filter((b) => b.tenant === 'acme').map((b) => b.billNo);
  const taskId = 'T-acme-summary-fails';
  const items = acme.map((billNo) => item(taskId, billNo));
  await settle(items);
  nextItems = items;
  failNextSummary = true;
  const since = Math.floor(Date.now() / 1000) - 1;

  const run = await h.paperclip.runBatch({ taskId, tenant: 'acme' });
  assert.equal(run.status, 'FAILED');
  assert.match(run.error ?? '', /^BatchSummaryFailedError: .*SlowDown: S3 answered 503/);
  const record = JSON.parse(
    (await h.paperclip.services.evidence.get(batchKey({ tenant: 'acme', taskId }, 'batch-failed.json')))!.toString(),
  ) as {
    error: string;
    executionArn: string;
  };
  assert.match(record.error, /SlowDown/);
  assert.equal(record.executionArn, run.executionArn);
  const mails = await h.paperclip.stack.fetchEmails(since);
  assert.ok(
    mails.some((m) => m.destination.to.includes('ops-oncall@ops.example') && JSON.stringify(m).includes(taskId)),
    'the operators are mailed',
  );
});
