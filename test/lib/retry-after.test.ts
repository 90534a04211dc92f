import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRateLimit, fitsIn, rateLimitCounts, retryAfterMs, waitOutRateLimits } from '../../src/lib/retry-after.js';
import { deadline } from '../../src/lib/deadline.js';

test('Retry-After is read in seconds or as an HTTP date; anything else is no value', () => {
  const now = Date.parse('2026-12-05T06:00:00Z');
  assert.equal(retryAfterMs('2', now), 2000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Sat, 05 Dec 2026 06:00:03 GMT', now), 3000);
  assert.equal(retryAfterMs('Sat, 05 Dec 2026 05:59:00 GMT', now), 0, 'a date in the past: no wait');
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

test('every message names the rate limit and the request', () => {
  assert.equal(
    describeRateLimit('POST /diff/X/mark', 1500),
    'rate limited: the vendor answered 429 Too Many Requests (Retry-After 2 s) to POST /diff/X/mark',
  );
  assert.match(describeRateLimit('GET /a', undefined), /no Retry-After/);
  const clock = { now: 7000 };
  const limit = deadline(3000, { now: () => clock.now });
  assert.equal(fitsIn(limit, 2000), true);
  assert.equal(fitsIn(limit, 4000), false);
});

test('429s are waited out within one budget: the request is made again until it is answered, and a wait that does not fit names the limit', async () => {
  const answers = [429, 429, 200];
  const seenBefore = rateLimitCounts.seen;
  const made: number[] = [];
  const again = async () => {
    const status = answers.shift()!;
    made.push(status);
    return status;
  };
  const read = { status: (s: number) => s, retryAfter: () => '0' };
  const tooLong = (wait: number) => new Error(`too long: ${wait}`);
  assert.equal(await waitOutRateLimits(await again(), read, again, deadline(5000), tooLong), 200);
  assert.deepEqual(made, [429, 429, 200]);
  assert.equal(rateLimitCounts.seen - seenBefore, 2);

  const slow = { status: () => 429, retryAfter: () => '120' };
  await assert.rejects(
    waitOutRateLimits(429, slow, async () => 429, deadline(5000), tooLong),
    /too long: 120000/,
  );
});
