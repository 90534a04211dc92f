import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak } from '../../chaos/soak.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

/**
 * A small chaos soak: seeded faults on a share of the bills, two concurrent
 * batch runners in a process that is SIGKILLed mid-batch and restarted on the
 * same data folder, an operator pass over the takeover queue. Whatever the
 * faults did, the vendor's journal and Paperclip's records must agree.
 */
// Seed 13 puts a slow vendor (2.5 s on four requests), a revoked session and a bill-scoped redesign on three of the eight
// bills. The SIGKILL may land while an item is still routing: the restart's recovery must restart that item (it has no
// claim, and every re-run is turned away by its execution name), or the verdict reports it lost.
test('small soak: faults, two runners, a SIGKILL and a restart, an operator pass: every invariant holds', async () => {
  const lines: string[] = [];
  const report = await runSoak({
    items: 8,
    runners: 2,
    faultRate: 0.4,
    seed: 13,
    killAfter: 0.3,
    claimLeaseSeconds: 10,
    readbackDeadlineMs: 4000,
    maxConcurrency: 2,
    redesignRenders: 1,
    operatorRetry: true,
    settleMs: 150,
    timeLimitMs: 12 * 60_000,
    baseConfigPath: 'config/paperclip.local.yaml',
    log: (line) => lines.push(line),
  });
  const context = `${lines.join('\n')}\n${JSON.stringify(report.verdict, null, 2)}`;
  const [first, restart] = report.phases;
  assert.equal(first?.killed, true, `the first runner was killed mid-batch\n${context}`);
  assert.ok((first?.mutationsAtEnd ?? 0) < report.verdict.counts.items, 'it was killed before the batch could finish');
  assert.equal(restart?.exitCode, 0, context);
  assert.equal(restart?.error, undefined, context);

  const { invariants, counts } = report.verdict;
  assert.equal(invariants.maxMutationsPerKey, 1, `at most one vendor mutation per key\n${context}`);
  assert.deepEqual(invariants.keysWithMoreThanOneMutation, [], context);
  assert.deepEqual(invariants.falseSuccesses, [], `no item done that the vendor does not show done\n${context}`);
  assert.deepEqual(invariants.lostItems, [], `every item is settled or waiting in the takeover queue\n${context}`);
  assert.deepEqual(invariants.unattributedMutations, [], context);
  assert.equal(counts.items, 8);
  assert.ok(counts.done + counts.openInTakeover + (counts.claimStatus['STALE'] ?? 0) + (counts.claimStatus['FAILED'] ?? 0) === 8, context);
  assert.ok(report.ok, context);
});

// Ledgerly's resolve is two vendor writes (the reason saved, then Resolve, then a review), its ownership and readback
// go through the cookie-authenticated API. Each of the five bills gets one of the five faults, in turn; two runners
// race on the same keys. No kill and no restart here (the simulator's soak above covers them): this is about faults.
test('small soak on Ledgerly: half success, commit then timeout, 500, slow, session revoked; every invariant holds', async () => {
  const lines: string[] = [];
  const report = await runSoak({
    backOffice: 'ledgerly',
    items: 5,
    runners: 2,
    faultRate: 1,
    faultKinds: ['half_success', 'commit_then_timeout', 'error_500', 'slow_ms', 'session_revoked'],
    seed: 13,
    killAfter: 0,
    restart: false,
    claimLeaseSeconds: 10,
    readbackDeadlineMs: 4000,
    maxConcurrency: 2,
    redesignRenders: 0,
    operatorRetry: true,
    settleMs: 150,
    timeLimitMs: 8 * 60_000,
    log: (line) => lines.push(line),
  });
  const context = `${lines.join('\n')}\n${JSON.stringify({ verdict: report.verdict, faults: report.faults }, null, 2)}`;
  assert.deepEqual(
    report.faults.fired,
    { half_success: 1, commit_then_timeout: 1, error_500: 1, slow_ms: 1, session_revoked: 1 },
    `every planned fault fired\n${context}`,
  );
  assert.equal(report.phases[0]?.exitCode, 0, context);
  assert.equal(report.phases[0]?.error, undefined, context);

  const { invariants, counts } = report.verdict;
  assert.equal(invariants.maxMutationsPerKey, 1, `no vendor write of a key twice (the reason save and Resolve once each)\n${context}`);
  assert.deepEqual(invariants.falseSuccesses, [], `no item done that Ledgerly does not show Resolved\n${context}`);
  assert.deepEqual(invariants.lostItems, [], `every item is settled, waiting in the takeover queue, or reported at routing\n${context}`);
  assert.deepEqual(invariants.unattributedMutations, [], context);
  assert.equal(counts.items, 5);
  const accounted =
    counts.done +
    counts.openInTakeover +
    (counts.claimStatus['STALE'] ?? 0) +
    (counts.claimStatus['FAILED'] ?? 0) +
    (counts.claimStatus['ROUTING_FAILED'] ?? 0);
  assert.equal(accounted, 5, context);
  assert.ok(report.ok, context);
});

// Lambda throttles on every Lambda task state (the local runner's fault switch), as an account at its concurrency
// quota produces them, with two runners racing on the same keys; no vendor fault, no kill. Every throttled step is
// retried with backoff (BrowserWrite too: a throttled invocation never ran), so every item ends done, written once.
test('small soak with Lambda throttles injected on every task state: every invariant holds, every item done once', async () => {
  const lines: string[] = [];
  const report = await runSoak({
    items: 4,
    runners: 2,
    faultRate: 0,
    seed: 5,
    killAfter: 0,
    restart: false,
    claimLeaseSeconds: 10,
    readbackDeadlineMs: 4000,
    maxConcurrency: 2,
    redesignRenders: 0,
    operatorRetry: false,
    settleMs: 150,
    lambdaThrottles: 0.3,
    timeLimitMs: 8 * 60_000,
    baseConfigPath: 'config/paperclip.local.yaml',
    log: (line) => lines.push(line),
  });
  const context = `${lines.join('\n')}\n${JSON.stringify({ verdict: report.verdict, lambdaFaults: report.lambdaFaults }, null, 2)}`;
  assert.equal(report.phases[0]?.exitCode, 0, context);
  assert.equal(report.phases[0]?.error, undefined, context);
  const fired = report.lambdaFaults.fired;
  assert.ok(Object.values(fired).reduce((a, b) => a + b, 0) > 0, `throttles fired\n${context}`);
  const { invariants, counts } = report.verdict;
  assert.equal(invariants.maxMutationsPerKey, 1, context);
  assert.deepEqual(invariants.falseSuccesses, [], context);
  assert.deepEqual(invariants.lostItems, [], context);
  assert.deepEqual(invariants.unattributedMutations, [], context);
  assert.equal(counts.items, 4);
  assert.equal(counts.done, 4, `every item done\n${context}`);
  assert.ok(report.ok, context);
});
