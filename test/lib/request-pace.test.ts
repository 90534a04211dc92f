import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paceAccount, pacedPath, paceFor, RequestPace } from '../../src/lib/request-pace.js';
import {
  currentRateLimitTally,
  noteRateLimited,
  noteRateLimitWait,
  rateLimitCounts,
  withRateLimitTally,
} from '../../src/lib/retry-after.js';
import { pacedRequestPatterns } from '../../src/browser/request-pace.js';
import { RequestPaceSpec } from '../../src/sitepack/schema.js';

/** A clock that only moves when something sleeps on it: the pace's decisions, never the machine's timing. */
function fakeClock(start = 1_000_000) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

test('a pace lets maxRequests go at once, then holds the next until the oldest leaves the window', async () => {
  const clock = fakeClock();
  const pace = new RequestPace(3, 10_000, clock);
  const sent: number[] = [];
  const waits = await Promise.all(
    Array.from({ length: 7 }, () =>
      pace.take().then((waited) => {
        sent.push(clock.now() - 1_000_000);
        return waited;
      }),
    ),
  );
  assert.deepEqual(sent, [0, 0, 0, 10_000, 10_000, 10_000, 20_000]);
  assert.deepEqual(waits, [0, 0, 0, 10_000, 10_000, 10_000, 20_000], 'each take says how long it waited');
  // Counted as the vendor counts (a request leaves the window perMs after it was sent): never more than 3 in one.
  for (const t of sent) assert.ok(sent.filter((u) => u > t - 10_000 && u <= t).length <= 3, `window ending at ${t}`);
  assert.deepEqual(pace.stats, { taken: 7, delayed: 4, delayedMs: 50_000 });
});

test('a pace spaced by the window lets a request go at once once the window has room again', async () => {
  const clock = fakeClock();
  const pace = new RequestPace(2, 1_000, clock);
  assert.equal(await pace.take(), 0);
  await clock.sleep(600);
  assert.equal(await pace.take(), 0);
  // The third waits only until the first is 1 s old (400 ms more), not a whole window.
  assert.equal(await pace.take(), 400);
  assert.deepEqual(clock.sleeps, [600, 400]);
});

test('one pace per vendor account in the process: every context and API client of an identity shares it', () => {
  const spec = { maxRequests: 24, perSeconds: 10 };
  const a = paceFor(paceAccount('http://127.0.0.1:4300/portal', 'js-acme'), spec);
  assert.equal(paceFor(paceAccount('http://127.0.0.1:4300/', 'js-acme'), spec), a, 'the same origin and username: the same pace');
  assert.notEqual(paceFor(paceAccount('http://127.0.0.1:4300/', 'js-globex'), spec), a, 'another account has its own');
  const changed = paceFor(paceAccount('http://127.0.0.1:4300/', 'js-acme'), { maxRequests: 10, perSeconds: 10 });
  assert.equal(changed.maxRequests, 10, 'a pack whose numbers changed gets a pace with the new numbers');
});

test('a pace refuses numbers that cannot work, and the pack field names the fix', () => {
  assert.throws(() => new RequestPace(0, 1000), /maxRequests/);
  assert.throws(() => new RequestPace(2, 0), /perMs/);
  const ok = RequestPaceSpec.safeParse({ maxRequests: 24, perSeconds: 10, paths: ['/portal/api/'] });
  assert.deepEqual(ok.data, { maxRequests: 24, perSeconds: 10, paths: ['/portal/api/'], assets: false });
  const message = (value: unknown) => RequestPaceSpec.safeParse(value).error?.issues[0]?.message ?? '';
  assert.match(message({ maxRequests: 0, perSeconds: 10 }), /pace\.maxRequests must be at least 1/);
  assert.match(message({ maxRequests: 2.5, perSeconds: 10 }), /pace\.maxRequests must be a whole number/);
  assert.match(message({ maxRequests: 2, perSeconds: 0 }), /pace\.perSeconds must be more than 0/);
  assert.match(message({ maxRequests: 2, perSeconds: 1, paths: ['api/'] }), /path prefixes starting with \//);
  assert.equal(RequestPaceSpec.safeParse({ maxRequests: 2, perSeconds: 1, burst: 3 }).success, false, 'unknown keys are refused');
});

test('what a pace counts: the vendor paths it names; in a browser, page loads and the app calls unless assets count too', () => {
  assert.equal(pacedPath(new URL('http://v/portal/api/bills'), ['/portal/api/']), true);
  assert.equal(pacedPath(new URL('http://v/portal/work/bills'), ['/portal/api/']), false);
  assert.equal(pacedPath(new URL('http://v/anything'), undefined), true);
  assert.deepEqual(pacedRequestPatterns({ origin: 'http://127.0.0.1:4300', paths: ['/portal/api/'], assets: false }), [
    { urlPattern: 'http://127.0.0.1:4300/portal/api/*', requestStage: 'Request', resourceType: 'Document' },
    { urlPattern: 'http://127.0.0.1:4300/portal/api/*', requestStage: 'Request', resourceType: 'XHR' },
    { urlPattern: 'http://127.0.0.1:4300/portal/api/*', requestStage: 'Request', resourceType: 'Fetch' },
  ]);
  assert.deepEqual(pacedRequestPatterns({ origin: 'http://v.example', paths: undefined, assets: true }), [
    { urlPattern: 'http://v.example/*', requestStage: 'Request' },
  ]);
  // A pattern's wildcards in a declared path are taken literally.
  assert.equal(pacedRequestPatterns({ origin: 'http://v', paths: ['/a*b?'], assets: true })[0]?.urlPattern, 'http://v/a\\*b\\?*');
});

test('429s and waits are tallied for the work they happened in, nested work adds to its parent, and in the process counts', async () => {
  const before = { ...rateLimitCounts };
  const [a, b] = await Promise.all([
    withRateLimitTally(async () => {
      noteRateLimited();
      await new Promise((resolve) => setImmediate(resolve));
      const inner = await withRateLimitTally(async () => {
        noteRateLimited(2);
        noteRateLimitWait(1500);
        currentRateLimitTally()?.add('pacedMs', 300);
        return 'inner';
      });
      assert.equal(inner.tally.seen, 2);
      return 'a';
    }),
    withRateLimitTally(async () => {
      noteRateLimited();
      throw new Error('b failed');
    }),
  ]);
  assert.deepEqual([a.tally.seen, a.tally.waitedMs, a.tally.pacedMs], [3, 1500, 300], 'the inner work counts in the outer too');
  assert.equal('result' in a && a.result, 'a');
  assert.equal(b.tally.seen, 1, 'a failed step keeps its tally');
  assert.ok('error' in b);
  assert.equal(rateLimitCounts.seen - before.seen, 4);
  assert.equal(rateLimitCounts.waitedMs - before.waitedMs, 1500);
});
