import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { batchKey } from '../../src/app/ports/evidence.js';
import type { WiredServices } from '../../src/composition/services.js';
import { batchChain } from '../../src/evidence/folder.js';
import { verifyBatch } from '../../src/evidence/verify.js';
import { closeLateItems, seedSealedBatch, startServices, type CloseCost } from '../../bench/late-seal-scale.js';

/**
 * An item that closes after its batch was sealed (an approval decided, a
 * write undone) adds itself to the seal with requests that do not grow with
 * the batch: no other item's chain, record or claim is read, and the batch
 * folder is not listed. Before, one such close in a sealed batch of 2,000 made
 * 2,002 sequential queries; every approval item and every compensation closes
 * this way. The requests are counted on the services' own SDK clients.
 *
 * Two batches: one of 100 items seeded whole (every claim, chain and record),
 * verified in full after the closes; and one of 10,000 whose seal.json and
 * batch page hold every item at full size, seeded with only the involved
 * items' own data (seeding 10,000 whole through the emulators takes minutes:
 * `npx tsx bench/late-seal-scale.ts 10000` does, and verifies it). The same
 * closes make the same requests in both.
 */
describe('an item closing after its batch was sealed', () => {
  let services: WiredServices;
  let stop: () => Promise<void>;
  before(async () => {
    ({ services, stop } = await startServices());
  });
  after(async () => stop());

  /** Requests of one close, whatever the batch: the item's own, the batch chain's head, the batch page, its linked item. */
  const BOUND = 30;
  const within = (what: string, cost: CloseCost) =>
    assert.ok(cost.dynamodb + cost.s3 <= BOUND, `${what} made ${cost.dynamodb + cost.s3} requests: ${JSON.stringify(cost.calls)}`);
  let whole: Awaited<ReturnType<typeof closeLateItems>>;

  test('in a batch of 100 seeded whole: each close makes a bounded number of requests, and the whole batch verifies', async () => {
    const fixture = await seedSealedBatch(services, 'T-late-seal-100', 100);
    whole = await closeLateItems(services, fixture);
    within('the approved item', whole.approval);
    within('the inverse', whole.inverse);
    within('the undone write', whole.undone);

    const result = await verifyBatch(services, fixture.batch);
    assert.deepEqual(result.findings, [], 'the seal and its three addenda cover every item and object');
    const chain = await services.audit.events(batchChain(fixture.batch));
    assert.deepEqual(
      chain.map((e) => e.type),
      ['sealed', 'item_sealed', 'item_sealed', 'item_sealed'],
      'one addendum per close, each chained to the one before',
    );
    const page = (await services.evidence.get(batchKey(fixture.batch, 'index.html')))!.toString('utf8');
    const row = (key: string) => page.split('\n').find((line) => line.startsWith(`<tr id="${key}"`)) ?? '';
    assert.match(row(fixture.approvalKey), /badge[^>]*>done</, 'the approved item shows its outcome on the batch page');
    assert.ok(row(fixture.undoneKey).includes(`undone by <a href="${fixture.inverseKey}/index.html"`), 'the undone write is marked');
    assert.ok(row(fixture.inverseKey).includes(`undoes <a href="${fixture.undoneKey}/index.html"`), 'the inverse has its row');
    assert.equal(page.split('\n').filter((line) => line.startsWith('<tr id=')).length, 101, 'every other row is kept as it was');
  });

  test('in a batch of 10,000: the same closes make the same requests, and each item verifies against the seal', async () => {
    assert.ok(whole, 'runs after the batch of 100');
    const fixture = await seedSealedBatch(services, 'T-late-seal-10000', 10_000, { only: 'involved' });
    const large = await closeLateItems(services, fixture);
    assert.deepEqual(large.approval.calls, whole.approval.calls, 'the approved item');
    assert.deepEqual(large.inverse.calls, whole.inverse.calls, 'the inverse');
    assert.deepEqual(large.undone.calls, whole.undone.calls, 'the undone write');
    for (const key of [fixture.approvalKey, fixture.undoneKey, fixture.inverseKey]) {
      const result = await verifyBatch(services, fixture.batch, { onlyKey: key });
      assert.deepEqual(result.findings, [], `${key} verifies against the seal and its addenda`);
    }
    const page = (await services.evidence.get(batchKey(fixture.batch, 'index.html')))!.toString('utf8');
    assert.equal(page.split('\n').filter((line) => line.startsWith('<tr id=')).length, 10_001, 'the page still lists every item');
  });
});
