import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { claimStep } from '../../../src/app/guarded-write/claim.js';
import { complete } from '../../../src/app/guarded-write/complete.js';
import { browserWrite } from '../../../src/app/guarded-write/write.js';
import type { ItemState } from '../../../src/app/guarded-write/state.js';
import { batchKey, evidenceKey } from '../../../src/app/ports/evidence.js';
import type { VendorApiPort } from '../../../src/app/ports/vendor-api.js';
import type { Claim } from '../../../src/domain/claim.js';
import { ClaimFencedError, WriteNotCommittedError } from '../../../src/domain/errors.js';
import { EXECUTION, itemState, MemoryClaims, memoryServices, OTHER_EXECUTION, routedItem, storedClaim } from './memory-ports.js';

/**
 * The guarded-write steps against in-memory fakes of their ports (test/app/guarded-write/memory-ports.ts): what
 * each step decides and records for a fresh, a duplicate and a lost claim, without Chromium or an emulator.
 * test/e2e/ runs the same steps on the embedded stack and a real browser.
 */

const item = routedItem();
const expired = () => new Date(Date.now() - 1000).toISOString();
const claimed = (claim: { owner: string; version: number }): ItemState['claim'] => ({ decision: 'proceed', claim });

describe('claim', () => {
  test('a fresh key: the claim is created for this run at version 1 and the trail says so', async () => {
    const s = memoryServices();
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'proceed', claim: { owner: EXECUTION, version: 1 } });
    const row = s.claims.rows.get(item.key)!;
    assert.equal(row.status, 'CLAIMED');
    assert.equal(row.owner, EXECUTION);
    assert.ok(new Date(row.leaseUntil).getTime() > Date.now(), 'the claim carries a live lease');
    assert.deepEqual(s.audit.types(item.key), ['claimed']);
  });

  test('the 429s routing met before the claim existed start the claim’s counts; later steps add to them', async () => {
    const s = memoryServices();
    const routed = { ...item, rateLimitsAtRouting: { seen: 2, waitedMs: 2000, pacedMs: 150 } };
    await claimStep(s, { state: itemState(routed), executionArn: EXECUTION });
    const row = s.claims.rows.get(item.key)!;
    assert.deepEqual([row.rateLimited, row.rateLimitWaitMs, row.paceWaitMs], [2, 2000, 150]);
    await s.claims.addRateLimits(item.key, { seen: 1, waitedMs: 1000, pacedMs: 0 });
    const after = s.claims.rows.get(item.key)!;
    assert.deepEqual([after.rateLimited, after.rateLimitWaitMs, after.paceWaitMs, after.version], [3, 3000, 150, 1]);
    // A claim of a key routing met no 429 for carries none of the fields.
    const calm = memoryServices();
    await claimStep(calm, { state: itemState(item), executionArn: EXECUTION });
    assert.equal('rateLimited' in calm.claims.rows.get(item.key)!, false);
  });

  test('a duplicate of a write another run holds with a live lease is skipped, and nothing is changed', async () => {
    const s = memoryServices();
    s.claims.rows.set(item.key, storedClaim(item));
    const before = structuredClone(s.claims.rows.get(item.key));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'skip', reason: 'in progress elsewhere', status: 'CLAIMED' });
    assert.deepEqual(s.claims.rows.get(item.key), before);
    assert.deepEqual(s.audit.types(item.key), []);
  });

  test('a duplicate of a settled write is skipped with the status it settled in', async () => {
    const s = memoryServices();
    s.claims.rows.set(item.key, storedClaim(item, { status: 'DONE', leaseUntil: expired() }));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'skip', reason: 'already DONE', status: 'DONE' });
    assert.equal(s.claims.rows.get(item.key)!.owner, OTHER_EXECUTION);
  });

  test('the same run re-entering (a retried Lambda) after the commit click reads back first, at the same version', async () => {
    const s = memoryServices();
    s.claims.rows.set(item.key, storedClaim(item, { owner: EXECUTION, status: 'WRITING' }));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'readback_first', claim: { owner: EXECUTION, version: 1 } });
    assert.deepEqual(s.audit.types(item.key), []);
  });

  test('an abandoned claim nobody clicked on is taken over with the fencing version + 1', async () => {
    const s = memoryServices();
    s.claims.rows.set(item.key, storedClaim(item, { leaseUntil: expired() }));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'proceed', claim: { owner: EXECUTION, version: 2 } });
    assert.equal(s.claims.rows.get(item.key)!.owner, EXECUTION);
    assert.deepEqual(s.audit.types(item.key), ['claim_taken_over']);
  });

  test('an abandoned claim that may have clicked is taken over only to read back, never to click blind', async () => {
    const s = memoryServices();
    s.claims.rows.set(item.key, storedClaim(item, { status: 'WRITING', leaseUntil: expired() }));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'readback_first', claim: { owner: EXECUTION, version: 2 } });
  });

  test('a claim lost to another run taking over the same abandoned claim first is skipped, and the trail is untouched', async () => {
    /** Another run's takeover lands between this run's read and its own conditional update. */
    class RacedClaims extends MemoryClaims {
      override async takeOver(previous: Claim, newOwner: string, leaseUntil: string): Promise<Claim | undefined> {
        this.rows.set(previous.key, {
          ...previous,
          owner: 'arn:aws:states:us-east-1:000000000000:execution:pc-guarded-write:run-2',
          version: 2,
        });
        return super.takeOver(previous, newOwner, leaseUntil);
      }
    }
    const claims = new RacedClaims();
    const s = memoryServices({ claims });
    claims.rows.set(item.key, storedClaim(item, { leaseUntil: expired() }));
    const state = await claimStep(s, { state: itemState(item), executionArn: EXECUTION });
    assert.deepEqual(state.claim, { decision: 'skip', reason: 'lost the race to take over an abandoned claim', status: 'CLAIMED' });
    assert.equal(claims.rows.get(item.key)!.version, 2);
    assert.notEqual(claims.rows.get(item.key)!.owner, EXECUTION);
    assert.deepEqual(s.audit.types(item.key), []);
  });
});

describe('one open write per item, across tasks', () => {
  const first = routedItem({ key: 'k-acme_00000000000000000000000000000001', taskId: 'T-first' });
  const second = routedItem({ key: 'k-acme_00000000000000000000000000000002', taskId: 'T-second' });

  for (const status of ['CLAIMED', 'WRITING', 'TAKEOVER'] as const) {
    test(`a second task's key on an item whose first write is ${status} is blocked, naming the open key; nothing else moves`, async () => {
      const s = memoryServices();
      await claimStep(s, { state: itemState(first), executionArn: OTHER_EXECUTION });
      const held = s.claims.rows.get(first.key)!;
      s.claims.rows.set(first.key, { ...held, status });
      const state = await claimStep(s, { state: itemState(second), executionArn: EXECUTION });
      assert.equal(state.claim?.decision, 'blocked');
      assert.ok(state.claim?.decision === 'blocked');
      assert.equal(state.claim.openKey, first.key);
      assert.equal(state.claim.openStatus, status);
      assert.match(state.claim.reason, new RegExp(`unresolved write ${first.key} \\(mark_processed, task T-first\\)`));
      if (status === 'TAKEOVER') assert.match(state.claim.reason, /in takeover: resolve it \(paperclip takeover show /);
      assert.equal(s.claims.rows.get(second.key)!.status, 'BLOCKED');
      assert.equal(s.claims.rows.get(second.key)!.outcome, 'blocked');
      assert.equal((await s.claims.itemLock('acme', first.billNo))?.holder, first.key, 'the first write still holds the item');
      assert.deepEqual(s.audit.types(second.key), ['claimed', 'blocked']);
      assert.equal(s.claims.rows.get(first.key)!.status, status);
    });
  }

  test('once the first write is resolved (its claim settled, released or not), a later task takes the item', async () => {
    const s = memoryServices();
    await claimStep(s, { state: itemState(first), executionArn: OTHER_EXECUTION });
    // Resolved by an operator (takeover resolve --as done) without a release: the holder's claim is the truth.
    s.claims.rows.set(first.key, { ...s.claims.rows.get(first.key)!, status: 'DONE' });
    const state = await claimStep(s, { state: itemState(second), executionArn: EXECUTION });
    assert.equal(state.claim?.decision, 'proceed');
    assert.equal((await s.claims.itemLock('acme', first.billNo))?.holder, second.key);
  });

  test('a done write releases its item; the same key re-entering keeps it; another bill is never held', async () => {
    const s = memoryServices();
    await claimStep(s, { state: itemState(first), executionArn: EXECUTION });
    const again = await claimStep(s, { state: itemState(first), executionArn: EXECUTION });
    assert.equal(again.claim?.decision, 'proceed', 'a retried Claim step keeps the item it holds');
    const other = routedItem({ key: 'k-acme_00000000000000000000000000000003', billNo: 'ACME-202611-0002' });
    assert.equal((await claimStep(s, { state: itemState(other), executionArn: EXECUTION })).claim?.decision, 'proceed');
    s.claims.rows.set(first.key, { ...s.claims.rows.get(first.key)!, status: 'WRITING' });
    await complete(s, {
      state: itemState(first, {
        claim: claimed({ owner: EXECUTION, version: 1 }),
        readback: {
          verdict: 'confirmed',
          source: 'list',
          observations: [],
          reason: 'r',
          next: 'complete',
          why: 'w',
          degraded: false,
          evidence: [],
        },
      }),
      executionArn: EXECUTION,
      closeAs: 'done',
    });
    assert.equal((await s.claims.itemLock('acme', first.billNo))?.holder, undefined, 'released when the write is done');
  });

  test('the compensation of the open write passes it (it writes what that write left) and does not take the item', async () => {
    const s = memoryServices();
    await claimStep(s, { state: itemState(first), executionArn: OTHER_EXECUTION });
    s.claims.rows.set(first.key, { ...s.claims.rows.get(first.key)!, status: 'WRITING' });
    const inverse = routedItem({ key: 'k-acme_00000000000000000000000000000004', action: 'unmark_processed', compensates: first.key });
    const state = await claimStep(s, { state: itemState(inverse), executionArn: EXECUTION });
    assert.equal(state.claim?.decision, 'proceed');
    assert.equal((await s.claims.itemLock('acme', first.billNo))?.holder, first.key);
  });
});

describe('write (api tier)', () => {
  const apiItem = routedItem({ tier: 'api' });
  const pack = { actions: { mark_processed: { tiers: { api: { method: 'POST', path: '/api/x', body: {} } } } } };

  test('the claim moves to WRITING before the vendor is called, and the exchange is kept as evidence', async () => {
    const statusAtCall: string[] = [];
    const claims = new MemoryClaims();
    const api: VendorApiPort = {
      readItem: async () => undefined,
      write: async () => {
        statusAtCall.push(claims.rows.get(apiItem.key)!.status);
        return { status: 200, body: { ok: true } };
      },
    };
    const s = memoryServices({ pack: pack as never, claims, vendorApi: async () => api });
    s.claims.rows.set(apiItem.key, storedClaim(apiItem, { owner: EXECUTION }));
    const result = await browserWrite(s, itemState(apiItem, { claim: claimed({ owner: EXECUTION, version: 1 }) }));
    assert.deepEqual(statusAtCall, ['WRITING']);
    assert.equal(result.committed, true);
    assert.deepEqual(
      result.evidence.map((e) => e.key),
      [evidenceKey(apiItem, 'api-exchange.json')],
    );
    assert.deepEqual(s.audit.types(apiItem.key), ['write_started']);
  });

  test('a run that lost its claim before the write never calls the vendor', async () => {
    let called = false;
    const api: VendorApiPort = {
      readItem: async () => undefined,
      write: async () => {
        called = true;
        return { status: 200, body: null };
      },
    };
    const s = memoryServices({ pack: pack as never, vendorApi: async () => api });
    // Another run took the claim over meanwhile: this run's version 1 no longer holds it.
    s.claims.rows.set(apiItem.key, storedClaim(apiItem, { owner: OTHER_EXECUTION, version: 2 }));
    await assert.rejects(browserWrite(s, itemState(apiItem, { claim: claimed({ owner: EXECUTION, version: 1 }) })), ClaimFencedError);
    assert.equal(called, false);
    assert.deepEqual(s.audit.types(apiItem.key), []);
  });

  test('a vendor refusal reaches the workflow as not committed, with the claim left WRITING for the readback', async () => {
    const api: VendorApiPort = {
      readItem: async () => undefined,
      write: async () => {
        throw new WriteNotCommittedError('the vendor API refused the write (409)');
      },
    };
    const s = memoryServices({ pack: pack as never, vendorApi: async () => api });
    s.claims.rows.set(apiItem.key, storedClaim(apiItem, { owner: EXECUTION }));
    await assert.rejects(browserWrite(s, itemState(apiItem, { claim: claimed({ owner: EXECUTION, version: 1 }) })), WriteNotCommittedError);
    assert.equal(s.claims.rows.get(apiItem.key)!.status, 'WRITING');
  });
});

describe('complete', () => {
  const confirmed: ItemState['readback'] = {
    verdict: 'confirmed',
    observedStatus: 'processed',
    source: 'list',
    observations: [],
    reason: 'the list shows processed',
    next: 'complete',
    why: 'confirmed',
    degraded: false,
    evidence: [],
  };
  /** The item runs in a batch that has not ended: its page is left to the batch's end, so complete stores only its own record. */
  const inRunningBatch = () => {
    const s = memoryServices();
    void s.evidence.put(batchKey(item, 'list.json'), '[]', 'application/json');
    return s;
  };

  test('done after a confirmed readback: the claim is DONE, the record stored and the trail closed', async () => {
    const s = inRunningBatch();
    s.claims.rows.set(item.key, storedClaim(item, { owner: EXECUTION, status: 'WRITING' }));
    const state = itemState(item, { claim: claimed({ owner: EXECUTION, version: 1 }), readback: confirmed });
    const outcome = await complete(s, { state, executionArn: EXECUTION, closeAs: 'done' });
    assert.deepEqual(outcome, { outcome: 'done', key: item.key, billNo: item.billNo, reason: undefined });
    assert.equal(s.claims.rows.get(item.key)!.status, 'DONE');
    assert.equal(s.claims.rows.get(item.key)!.outcome, 'done');
    const record = JSON.parse(String(await s.evidence.get(evidenceKey(item, 'record.json'))));
    assert.equal(record.outcome, 'done');
    assert.deepEqual(s.audit.types(item.key), ['completed']);
  });

  test('done is refused without a confirmed readback, and nothing is recorded', async () => {
    const s = inRunningBatch();
    s.claims.rows.set(item.key, storedClaim(item, { owner: EXECUTION, status: 'WRITING' }));
    const state = itemState(item, { claim: claimed({ owner: EXECUTION, version: 1 }), readback: { ...confirmed, verdict: 'unknown' } });
    await assert.rejects(complete(s, { state, executionArn: EXECUTION, closeAs: 'done' }), /only after a confirmed readback/);
    assert.equal(s.claims.rows.get(item.key)!.status, 'WRITING');
    assert.equal(await s.evidence.exists(evidenceKey(item, 'record.json')), false);
    assert.deepEqual(s.audit.types(item.key), []);
  });

  test('a run whose claim was taken over meanwhile cannot close it: fenced, no record, no event', async () => {
    const s = inRunningBatch();
    s.claims.rows.set(item.key, storedClaim(item, { owner: OTHER_EXECUTION, version: 2, status: 'WRITING' }));
    const state = itemState(item, { claim: claimed({ owner: EXECUTION, version: 1 }), readback: confirmed });
    await assert.rejects(complete(s, { state, executionArn: EXECUTION, closeAs: 'done' }), ClaimFencedError);
    assert.equal(s.claims.rows.get(item.key)!.status, 'WRITING');
    assert.equal(await s.evidence.exists(evidenceKey(item, 'record.json')), false);
    assert.deepEqual(s.audit.types(item.key), []);
  });

  test('rejected before anything was executed: CLAIMED becomes REJECTED with the reason', async () => {
    const s = inRunningBatch();
    s.claims.rows.set(item.key, storedClaim(item, { owner: EXECUTION }));
    const state = itemState(item, { claim: claimed({ owner: EXECUTION, version: 1 }) });
    const outcome = await complete(s, { state, executionArn: EXECUTION, closeAs: 'rejected', reason: 'approver said no' });
    assert.equal(outcome.outcome, 'rejected');
    assert.equal(s.claims.rows.get(item.key)!.status, 'REJECTED');
    assert.equal(s.claims.rows.get(item.key)!.reason, 'approver said no');
    assert.deepEqual(s.audit.types(item.key), ['rejected']);
  });
});
