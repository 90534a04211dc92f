import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deadline, DeadlineExpiredError, pollUntil } from '../../src/lib/deadline.js';

/** A clock the test moves by hand: the budget is checked against it, never against how fast the machine is. */
function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('one budget: remaining counts down to 0 and expired turns true when it is spent', () => {
  const c = clock();
  const d = deadline(5_000, { now: c.now });
  assert.equal(d.remaining(), 5_000);
  assert.equal(d.expired, false);
  c.advance(4_000);
  assert.equal(d.remaining(), 1_000);
  c.advance(2_000);
  assert.equal(d.remaining(), 0);
  assert.equal(d.expired, true);
});

test('a nested wait spends from the enclosing budget: it never outlives it, and a shorter one ends first', () => {
  const c = clock();
  const operation = deadline(5_000, { now: c.now });
  c.advance(3_000);
  const long = operation.within(10_000);
  assert.equal(long.at, operation.at, 'asked for 10 s with 2 s left: gets 2 s');
  assert.equal(long.remaining(), 2_000);
  const short = operation.within(500);
  assert.equal(short.remaining(), 500);
  c.advance(600);
  assert.equal(short.expired, true);
  assert.equal(operation.expired, false);
});

test('aborting an operation aborts its nested waits, with the reason, and spends what was left', () => {
  const operation = deadline(60_000);
  const nested = operation.within(30_000);
  const reason = new Error('the session closed');
  operation.abort(reason);
  assert.equal(operation.signal.aborted, true);
  assert.equal(nested.signal.aborted, true);
  assert.equal(nested.signal.reason, reason);
  assert.equal(nested.remaining(), 0);
  assert.equal(nested.expired, true);
});

test("an enclosing AbortSignal (the caller's own) aborts the deadline built on it", () => {
  const caller = new AbortController();
  const d = deadline(60_000, { signal: caller.signal });
  assert.equal(d.signal.aborted, false);
  caller.abort('stopped');
  assert.equal(d.signal.aborted, true);
  assert.equal(d.signal.reason, 'stopped');
  const already = deadline(60_000, { signal: caller.signal });
  assert.equal(already.expired, true, 'a deadline under an aborted signal starts spent');
});

test('the signal aborts by itself when the budget runs out, for cleanup in whatever still waits', async () => {
  const d = deadline(20);
  await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve(), { once: true }));
  assert.ok(d.signal.reason instanceof DeadlineExpiredError);
  assert.equal(d.expired, true);
});

test('sleep returns at once when the deadline is aborted, instead of sleeping out its interval', async () => {
  const d = deadline(60_000);
  const slept = d.sleep(30_000);
  d.abort();
  await slept;
  assert.equal(d.expired, true);
});

test('pollUntil: true as soon as the check holds, false once the budget is spent, and it always looks at least once', async () => {
  const c = clock();
  let calls = 0;
  const held = await pollUntil(
    deadline(1_000, { now: c.now }),
    async () => {
      calls += 1;
      return calls === 3;
    },
    0,
  );
  assert.equal(held, true);
  assert.equal(calls, 3);

  let looked = 0;
  const spent = deadline(1_000, { now: c.now });
  const never = await pollUntil(
    spent,
    async () => {
      looked += 1;
      c.advance(400);
      return false;
    },
    0,
  );
  assert.equal(never, false);
  assert.equal(looked, 3, 'each look moves the clock 400 ms: the third one leaves it past the budget');

  let once = 0;
  const looksOnce = async () => {
    once += 1;
    return false;
  };
  assert.equal(await pollUntil(deadline(0, { now: c.now }), looksOnce, 0), false);
  assert.equal(once, 1);
});
