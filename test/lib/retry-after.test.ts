import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRateLimit, fitsBefore, retryAfterMs } from '../../src/lib/retry-after.js';

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
  assert.equal(fitsBefore(10_000, 2000, 7000), true);
  assert.equal(fitsBefore(10_000, 4000, 7000), false);
});
