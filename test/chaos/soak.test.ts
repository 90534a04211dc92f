import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertRunnerFinished, assertSoakInvariants, runSmallSoak, soakEveryKitFault } from '../support/soak.js';

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
  const soak = await runSmallSoak({
    items: 8,
    faultRate: 0.4,
    seed: 13,
    killAfter: 0.3,
    restart: true,
    redesignRenders: 1,
    timeLimitMs: 12 * 60_000,
    baseConfigPath: 'config/paperclip.local.yaml',
  });
  const { report, context } = soak;
  const [first, restart] = report.phases;
  assert.equal(first?.killed, true, `the first runner was killed mid-batch\n${context}`);
  assert.ok((first?.mutationsAtEnd ?? 0) < report.verdict.counts.items, 'it was killed before the batch could finish');
  assert.equal(restart?.exitCode, 0, context);
  assert.equal(restart?.error, undefined, context);

  assertSoakInvariants(soak, 8, {
    oneMutationPerKey: 'at most one vendor mutation per key',
    noFalseSuccess: 'no item done that the vendor does not show done',
    noLostItem: 'every item is settled or waiting in the takeover queue',
  });
  const { counts } = report.verdict;
  assert.ok(counts.done + counts.openInTakeover + (counts.claimStatus['STALE'] ?? 0) + (counts.claimStatus['FAILED'] ?? 0) === 8, context);
});

// Ledgerly's resolve is two vendor writes (the reason saved, then Resolve, then a review), its ownership and readback
// go through the cookie-authenticated API. Each of the five bills gets one of the five faults, in turn; two runners
// race on the same keys. No kill and no restart here (the simulator's soak above covers them): this is about faults.
test('small soak on Ledgerly: half success, commit then timeout, 500, slow, session revoked; every invariant holds', async () => {
  const soak = await soakEveryKitFault('ledgerly', {
    oneMutationPerKey: 'no vendor write of a key twice (the reason save and Resolve once each)',
    noFalseSuccess: 'no item done that Ledgerly does not show Resolved',
    noLostItem: 'every item is settled, waiting in the takeover queue, or reported at routing',
  });
  const { counts } = soak.report.verdict;
  const accounted =
    counts.done +
    counts.openInTakeover +
    (counts.claimStatus['STALE'] ?? 0) +
    (counts.claimStatus['FAILED'] ?? 0) +
    (counts.claimStatus['ROUTING_FAILED'] ?? 0);
  assert.equal(accounted, 5, soak.context);
});

// Lambda throttles on every Lambda task state (the local runner's fault switch), as an account at its concurrency
// quota produces them, with two runners racing on the same keys; no vendor fault, no kill. Every throttled step is
// retried with backoff (BrowserWrite too: a throttled invocation never ran), so every item ends done, written once.
test('small soak with Lambda throttles injected on every task state: every invariant holds, every item done once', async () => {
  const soak = await runSmallSoak(
    {
      items: 4,
      faultRate: 0,
      seed: 5,
      operatorRetry: false,
      lambdaThrottles: 0.3,
      baseConfigPath: 'config/paperclip.local.yaml',
    },
    (report) => ({ verdict: report.verdict, lambdaFaults: report.lambdaFaults }),
  );
  assertRunnerFinished(soak);
  const fired = soak.report.lambdaFaults.fired;
  assert.ok(Object.values(fired).reduce((a, b) => a + b, 0) > 0, `throttles fired\n${soak.context}`);
  assertSoakInvariants(soak, 4);
  assert.equal(soak.report.verdict.counts.done, 4, `every item done\n${soak.context}`);
});
