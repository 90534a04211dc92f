import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { mapBounded } from '../../src/lib/map-bounded.js';

test('results keep input order, and no more than the limit run at once', async () => {
  let inFlight = 0;
  let most = 0;
  const delays = [30, 5, 20, 1, 15, 10, 2, 25];
  const results = await mapBounded(delays, 3, async (ms, i) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await setTimeout(ms);
    inFlight -= 1;
    return `${i}:${ms}`;
  });
  assert.deepEqual(
    results,
    delays.map((ms, i) => `${i}:${ms}`),
  );
  assert.equal(most, 3);
});

test('an empty list calls nothing; a limit below one still makes progress', async () => {
  assert.deepEqual(await mapBounded([], 4, async () => assert.fail('called')), []);
  assert.deepEqual(await mapBounded([1, 2], 0, async (n) => n * 2), [2, 4]);
});

test('after a failure no new item starts; the map rejects once the items in flight have finished', async () => {
  const started: number[] = [];
  const finished: number[] = [];
  await assert.rejects(
    mapBounded([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('item 2 failed');
      await setTimeout(20);
      finished.push(n);
      return n;
    }),
    /item 2 failed/,
  );
  assert.deepEqual(started, [1, 2]);
  assert.deepEqual(finished, [1]);
});

test('a failure rejects the whole map', async () => {
  await assert.rejects(
    mapBounded([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('item 2 failed');
      return n;
    }),
    /item 2 failed/,
  );
});
