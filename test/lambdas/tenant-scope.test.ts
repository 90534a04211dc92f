import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { handler as complete } from '../../lambdas/complete.js';
import { handler as takeover } from '../../lambdas/takeover.js';
import { handler as compensate } from '../../lambdas/compensate.js';
import { handler as requestApproval } from '../../lambdas/request-approval.js';
import { handler as summarizeBatch } from '../../lambdas/summarize-batch.js';
import type { WorkflowFunctionName } from '../../src/contracts/functions.js';
import type { Claim } from '../../src/domain/claim.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { workingBucketName } from '../../src/config/schema.js';
import { startHarness, type Harness } from '../support/embedded.js';
import { APPROVERS, openLink, postDecision, signedLink } from '../approvals/helpers.js';
import { approvalRequestsOf } from '../../src/app/approvals/request-approval.js';
import { itemState, routedItem } from '../app/guarded-write/memory-ports.js';

/**
 * The six functions that keep a tenant's records (complete, takeover, compensate, request-approval,
 * summarize-batch, approval-http) act under the session of the tenant the item, batch or signed approval id
 * names, and their own roles hold no table or evidence grant. Each is invoked here as the embedded stack
 * invokes it (its deployed handler, as its deployed role, every call evaluated by the local IAM) with an
 * event for tenant acme that points at tenant globex's item: the call fails with AccessDenied and globex's
 * claim, audit chain and evidence are as they were. On the code before, each of these calls went through the
 * function's whole-table and evidence/* grants and changed globex's item.
 */

let h: Harness;
const TASK = 'T-tenant-scope';
const globexKey = idempotencyKey({ taskId: TASK, tenant: 'globex', billNo: 'GLOBEX-1', action: 'mark_processed' });
const OWNER = 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:globex-run';
const globexEvidence = `evidence/globex/${TASK}/${globexKey}/before.png`;
/** S3 answers AccessDenied, DynamoDB AccessDeniedException. */
const denied = (error: unknown) => /^AccessDenied(Exception)?$/.test((error as Error).name);

/** Acme's item, as a forged or buggy event would carry it: acme's tenant, globex's key. */
const item = routedItem({
  key: globexKey,
  taskId: TASK,
  tenant: 'acme',
  billNo: 'GLOBEX-1',
  requestedBy: 'schedule',
  identity: 'svc-recon-acme',
  inverse: 'unmark_processed',
  targetStatus: 'PROCESSED',
});
const state = itemState(item, { claim: { decision: 'proceed', claim: { owner: OWNER, version: 1 } } });

function globexClaim(): Claim {
  const now = new Date().toISOString();
  return {
    key: globexKey,
    taskId: TASK,
    tenant: 'globex',
    billNo: 'GLOBEX-1',
    action: 'mark_processed',
    identity: 'svc-recon-globex',
    owner: OWNER,
    status: 'CLAIMED',
    version: 1,
    leaseUntil: now,
    attempts: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** What globex's item is: its claim, its audit chain, its evidence and approvals; nothing acme's session does may change it. */
async function globexItem() {
  const s = h.paperclip.services;
  return {
    claim: await s.claims.get(globexKey),
    chain: (await s.audit.events(globexKey)).map((e) => e.hash),
    evidence: await s.evidence.list(`evidence/globex/${TASK}/`),
    takeover: await s.takeovers.get(globexKey),
  };
}

function invokeAs(fn: WorkflowFunctionName | 'approval-http', handler: (event: unknown) => Promise<unknown>, event: unknown) {
  return h.paperclip.iam.runAsFunction(fn, () => handler(event));
}

before(async () => {
  h = await startHarness();
  const s = h.paperclip.services;
  assert.equal(await s.claims.tryCreate(globexClaim()), true);
  await s.audit.append(globexKey, { type: 'claimed', actor: 'svc-recon-globex', data: { owner: OWNER, version: 1 } });
  await s.evidence.put(globexEvidence, 'png', 'image/png');
});

after(async () => {
  await h?.stop();
});

describe("a tenant's records reached only through its own session", () => {
  test("complete for acme cannot close globex's item", async () => {
    const before = await globexItem();
    const event = { state, executionArn: OWNER, closeAs: 'rejected', reason: 'forged' };
    await assert.rejects(invokeAs('complete', complete, event), denied);
    assert.deepEqual(await globexItem(), before);
  });

  test("takeover for acme cannot read, move or queue globex's item", async () => {
    const before = await globexItem();
    await assert.rejects(invokeAs('takeover', takeover, { state, executionArn: OWNER }), denied);
    assert.deepEqual(await globexItem(), before);
  });

  test("compensate for acme cannot open a compensation of globex's write", async () => {
    const before = await globexItem();
    await assert.rejects(invokeAs('compensate', compensate, { phase: 'prepare', item, executionArn: OWNER }), denied);
    assert.deepEqual(await globexItem(), before);
  });

  test("request-approval for acme stores no request for globex's item", async () => {
    const before = await globexItem();
    await assert.rejects(invokeAs('request-approval', requestApproval, { state, taskToken: 'token', executionArn: OWNER }), denied);
    assert.deepEqual(await globexItem(), before);
    assert.deepEqual(await h.paperclip.services.approvals.byKey(globexKey), [], 'no request was stored, under any tenant');
  });

  test("complete, takeover and summarize-batch list a task's claims for their session's tenant only (the tenant-keyed index)", async () => {
    const s = h.paperclip.services;
    for (const fn of ['complete', 'takeover', 'summarize-batch'] as const) {
      await h.paperclip.iam.runAsFunction(fn, async () => {
        const acme = s.forTenant({ tenant: 'acme' });
        assert.deepEqual(await acme.claims.byTask(TASK, 'acme'), [], `${fn}: acme's own claims of the task (none)`);
        await assert.rejects(acme.claims.byTask(TASK, 'globex'), denied, `${fn}: globex's claims of the same task id`);
        await assert.rejects(acme.claims.byTask(TASK), denied, `${fn}: nor every tenant's, by a scan`);
        await assert.rejects(s.claims.byTask(TASK, 'globex'), denied, `${fn}: its own role lists no claims at all`);
      });
    }
    assert.deepEqual(
      (await s.claims.byTask(TASK, 'globex')).map((c) => c.key),
      [globexKey],
      'the operator (outside any function) sees them',
    );
  });

  test("summarize-batch for acme cannot read globex's map run results", async () => {
    const s = h.paperclip.services;
    const bucket = workingBucketName(s.config.evidence);
    const manifest = `runs/globex/${TASK}/exec-1/results/map-run/manifest.json`;
    await s.working.put(
      manifest,
      JSON.stringify({ DestinationBucket: bucket, MapRunArn: 'arn:map', ResultFiles: { SUCCEEDED: [], FAILED: [], PENDING: [] } }),
      'application/json',
    );
    const event = {
      batch: { taskId: TASK, tenant: 'acme' },
      read: 0,
      results: { MapRunArn: 'arn:map', ResultWriterDetails: { Bucket: bucket, Key: manifest } },
      executionArn: OWNER,
    };
    await assert.rejects(invokeAs('summarize-batch', summarizeBatch, event), denied);
    assert.deepEqual(await s.evidence.list(`evidence/acme/${TASK}/`), [], 'no batch summary or seal was written');
  });

  test("approval-http acts for the tenant the signed approval id names: a request naming globex's item reaches nothing of it", async () => {
    const s = h.paperclip.services;
    // An acme request (its id is acme's) that names globex's item and screenshot: what a forged row would hold.
    const approvalId = `k-acme_${'A'.repeat(24)}`;
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    await s.approvals.create({
      approvalId,
      key: globexKey,
      taskId: TASK,
      tenant: 'acme',
      billNo: 'GLOBEX-1',
      action: 'mark_processed',
      payloadHash: '0'.repeat(64),
      requester: 'schedule',
      allowedApprovers: [APPROVERS[0]],
      taskToken: 'token',
      executionArn: OWNER,
      beforeScreenshotKey: globexEvidence,
      createdAt: new Date().toISOString(),
      expiresAtIso: new Date(expiresAt * 1000).toISOString(),
      expiresAt,
      status: 'PENDING',
    });
    const before = await globexItem();
    const link = signedLink(h, { approvalId, approver: APPROVERS[0], expiresAt });
    const [path, query] = link.split('?');
    const screenshot = await fetch(`${path}/before.png?${query}`);
    assert.equal(screenshot.status, 500, "globex's screenshot is refused under acme's session");
    assert.notEqual(screenshot.headers.get('content-type'), 'image/png');
    const page = await openLink(link);
    assert.equal(page.status, 200, page.html);
    const decided = await postDecision(h, link, { ...page.fields, decision: 'approve' }, page.cookie ? { cookie: page.cookie } : {});
    assert.equal(decided.status, 500, "the decision cannot be appended to globex's chain");
    assert.deepEqual(await globexItem(), before);
    assert.deepEqual(await approvalRequestsOf(s, globexKey), [], "an acme row naming globex's key is never globex's request");
  });
});
