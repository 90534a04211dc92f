import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GENESIS_HASH, sealEvent, type AuditEvent } from '../../src/domain/audit-chain.js';
import type { Claim } from '../../src/domain/claim.js';
import { classifyItem } from '../../src/report/classify.js';
import { emitItemMetrics, metricsEnabled } from '../../src/report/emf.js';
import { METRIC_NAMES } from '../../src/contracts/metric-names.js';
import { computeReport, concurrentDuplicates, describeRateLimits } from '../../src/report/metrics.js';
import { parseSince } from '../../src/report/window.js';
import { renderReportText } from '../../src/report/render-text.js';
import { createProgressRenderer, progressBar } from '../../src/cli/progress.js';

/** A real hash chain built from event inputs, as the audit log would store it. */
function chain(key: string, inputs: Array<[string, Record<string, unknown>, string?]>): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const [i, [type, data, at]] of inputs.entries()) {
    events.push(
      sealEvent(
        key,
        i + 1,
        events.at(-1)?.hash ?? GENESIS_HASH,
        { type, actor: 'svc-recon-acme', data },
        at ?? new Date(Date.UTC(2026, 11, 1, 8, 0, i)).toISOString(),
      ),
    );
  }
  return events;
}

function claim(key: string, status: Claim['status'], over: Partial<Claim> = {}): Claim {
  return {
    key,
    taskId: 'T-unit',
    tenant: 'acme',
    billNo: 'ACME-202611-0001',
    action: 'mark_processed',
    identity: 'svc-recon-acme',
    owner: 'arn:x',
    status,
    version: 1,
    leaseUntil: '2026-12-01T09:00:00Z',
    attempts: 1,
    createdAt: '2026-12-01T08:00:00Z',
    updatedAt: '2026-12-01T08:01:00Z',
    ...over,
  };
}

const routed = (compensates?: string): [string, Record<string, unknown>] => [
  'routed',
  { item: { tier: 'browser', ...(compensates ? { compensates } : {}) } },
];
const pre: [string, Record<string, unknown>] = ['pre_state_registered', { preStatus: 'PENDING' }];
const commit: [string, Record<string, unknown>] = ['write_started', { tier: 'browser' }];
const readback = (verdict: string, observed: string, next: string): [string, Record<string, unknown>] => [
  'readback',
  { verdict, observed, next, degraded: false },
];

describe('item classification', () => {
  test('a confirmed write is done and no misoperation', () => {
    const facts = classifyItem(
      claim('k-a', 'DONE'),
      chain('k-a', [routed(), ['claimed', {}], pre, commit, readback('confirmed', 'PROCESSED', 'complete'), ['completed', {}]]),
    );
    assert.equal(facts.outcome, 'done');
    assert.equal(facts.commits, 1);
    assert.equal(facts.misoperation, false);
  });

  test('toast but nothing changed: caught as false success, not a misoperation', () => {
    const facts = classifyItem(
      claim('k-b', 'TAKEOVER'),
      chain('k-b', [routed(), pre, commit, readback('not_applied', 'PENDING', 'takeover'), ['takeover', { error: null }]]),
    );
    assert.equal(facts.outcome, 'takeover');
    assert.equal(facts.falseSuccessCaught, true);
    assert.equal(facts.misoperation, false);
  });

  test('a write that left an unintended state is a misoperation even when compensated', () => {
    const facts = classifyItem(
      claim('k-c', 'TAKEOVER'),
      chain('k-c', [
        routed(),
        pre,
        commit,
        readback('not_applied', 'REFUNDED', 'compensate'),
        ['compensation_started', {}],
        ['compensated', {}],
        ['takeover', {}],
      ]),
    );
    assert.equal(facts.unintendedState, true);
    assert.equal(facts.misoperation, true);
    assert.deepEqual(facts.compensation, { attempted: 1, succeeded: 1 });
  });

  test('a second commit is fine after a settled negative readback, a misoperation without one', () => {
    // Two commit clicks, a confirmed readback after the second; `first` is the readback after the first.
    const committedTwice = (key: string, first: ReturnType<typeof readback>) =>
      classifyItem(
        claim(key, 'DONE'),
        chain(key, [routed(), pre, commit, first, commit, readback('confirmed', 'PROCESSED', 'complete'), ['completed', {}]]),
      );
    const retried = committedTwice('k-d', readback('not_applied', 'PENDING', 'retry'));
    assert.equal(retried.commits, 2);
    assert.equal(retried.unprovenRecommit, false);
    const blind = committedTwice('k-e', readback('unknown', 'PROCESSING', 'takeover'));
    assert.equal(blind.unprovenRecommit, true);
    assert.equal(blind.misoperation, true);
  });

  test('done without a confirmed readback contradicts the record', () => {
    const facts = classifyItem(claim('k-f', 'DONE'), chain('k-f', [routed(), pre, commit, readback('unknown', 'PROCESSING', 'takeover')]));
    assert.equal(facts.outcomeContradicted, true);
    assert.equal(facts.misoperation, true);
  });

  test('session loss and awaiting approval are recognised', () => {
    const lost = classifyItem(claim('k-g', 'TAKEOVER'), chain('k-g', [routed(), pre, ['takeover', { error: 'SessionLostError' }]]));
    assert.equal(lost.sessionLost, true);
    const waiting = classifyItem(claim('k-h', 'CLAIMED'), chain('k-h', [routed(), pre, ['approval_requested', {}]]));
    assert.equal(waiting.outcome, 'awaiting_approval');
  });

  test('two keys committing the same bill while both were in flight count as a concurrent duplicate; one after the other does not', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 8, 0, s)).toISOString();
    const write = (key: string, from: number, to: number) =>
      classifyItem(
        claim(key, 'DONE', { taskId: key }),
        chain(key, [
          routed(),
          ['pre_state_registered', { preStatus: 'PENDING' }, at(from)],
          ['write_started', {}, at(from + 1)],
          ['readback', { verdict: 'confirmed', observed: 'PROCESSED', next: 'complete' }, at(to)],
          ['completed', {}, at(to)],
        ]),
      );
    assert.deepEqual([...concurrentDuplicates([write('k-1', 0, 10), write('k-2', 5, 15)])], ['k-2']);
    assert.deepEqual([...concurrentDuplicates([write('k-1', 0, 10), write('k-2', 20, 30)])], []);
    const report = computeReport([write('k-1', 0, 10), write('k-2', 5, 15)], []);
    assert.equal(report.misoperations.concurrentDuplicate, 1);
    assert.deepEqual(report.rates.misoperation, { count: 1, of: 2, rate: 0.5 });
  });

  test('compensation runs count under rollback, not as items; empty denominators give no rate', () => {
    const original = classifyItem(
      claim('k-o', 'DONE'),
      chain('k-o', [
        routed(),
        pre,
        commit,
        readback('confirmed', 'PROCESSED', 'complete'),
        ['completed', {}],
        ['compensation_started', {}],
        ['compensated', {}],
      ]),
    );
    const inverse = classifyItem(
      claim('k-i', 'DONE', { action: 'unmark_processed' }),
      chain('k-i', [routed('k-o'), pre, commit, readback('confirmed', 'PENDING', 'complete'), ['completed', {}]]),
    );
    const report = computeReport([original, inverse], []);
    assert.equal(report.items, 1);
    assert.equal(report.compensationRuns, 1);
    assert.deepEqual(report.rates.rollbackSuccess, { count: 1, of: 1, rate: 1 });
    assert.equal(report.writeAttempts, 2);
    const empty = computeReport([], []);
    assert.equal(empty.rates.rollbackSuccess.rate, null);
    assert.match(renderReportText(empty), /rollback success rate +0 +0 +—/);
  });
});

describe('rate limits in the report', () => {
  test('a batch whose items met 429s or waited for the pace says so beside its outcomes; one that met none says nothing', () => {
    const batches = [
      { task: 'T-429', tenant: 'acme', read: 6, items: 6, counts: { done: 6 }, rateLimited: 4, rateLimitWaitMs: 4000, paceWaitMs: 12_345 },
      { task: 'T-calm', tenant: 'acme', read: 2, items: 2, counts: { done: 2 } },
    ];
    const text = renderReportText(computeReport([], batches));
    assert.match(text, /T-429 .*done 6; rate limited \(429\) 4, waited 4\.0 s; paced 12\.3 s/);
    assert.match(text, /T-calm .*done 2\s*$/m);
    assert.equal(describeRateLimits({ paceWaitMs: 800 }), 'paced 0.8 s');
    assert.equal(describeRateLimits({}), '');
  });
});

describe('--since', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  test('durations back from now and ISO dates', () => {
    assert.equal(parseSince('24h', now).toISOString(), '2026-12-01T12:00:00.000Z');
    assert.equal(parseSince('7d', now).toISOString(), '2026-11-25T12:00:00.000Z');
    assert.equal(parseSince('90m', now).toISOString(), '2026-12-02T10:30:00.000Z');
    assert.equal(parseSince('2026-12-01T08:00:00Z', now).toISOString(), '2026-12-01T08:00:00.000Z');
    assert.equal(parseSince('2026-12-01', now).toISOString(), '2026-12-01T00:00:00.000Z');
  });
  test('anything else is refused with the accepted forms named', () => {
    for (const bad of ['yesterday', '24', '3y', '2026-13-45', ''])
      assert.throws(() => parseSince(bad, now), /ISO date .* duration back from now/);
  });
});

describe('EMF item metrics', () => {
  test('off outside Lambda unless asked for; POWERTOOLS_METRICS_DISABLED decides when set', () => {
    assert.equal(metricsEnabled({}), false);
    assert.equal(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'paperclip-complete' }), true);
    assert.equal(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'paperclip-complete', POWERTOOLS_METRICS_DISABLED: 'true' }), false);
    assert.equal(metricsEnabled({ POWERTOOLS_METRICS_DISABLED: 'false' }), true);
  });

  test('one EMF document per item in namespace Paperclip with the dashboard metric names and the tenant dimension', () => {
    const saved = { disabled: process.env['POWERTOOLS_METRICS_DISABLED'], dev: process.env['POWERTOOLS_DEV'] };
    process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
    process.env['POWERTOOLS_DEV'] = 'true'; // Powertools then writes through console.log, which this test reads
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: unknown) => void lines.push(String(line));
    try {
      const takeover = classifyItem(claim('k-t', 'TAKEOVER'), chain('k-t', [routed(), pre, ['takeover', { error: 'SessionLostError' }]]));
      const values = emitItemMetrics(takeover, 'takeover');
      assert.deepEqual(values, {
        ItemProcessed: 1,
        WriteAttempted: 0,
        TaskCompleted: 0,
        HumanTakeover: 1,
        Misoperation: 0,
        RollbackAttempted: 0,
        RollbackSucceeded: 0,
        SessionLost: 1,
      });
      const inverse = classifyItem(
        claim('k-i', 'DONE'),
        chain('k-i', [routed('k-o'), pre, commit, readback('confirmed', 'PENDING', 'complete'), ['completed', {}]]),
      );
      const inverseValues = emitItemMetrics(inverse, 'done');
      assert.equal(inverseValues.RollbackSucceeded, 1);
      assert.equal(inverseValues.WriteAttempted, 1, 'a compensation run that committed is a write attempt, as in the report');
    } finally {
      console.log = log;
      if (saved.disabled === undefined) delete process.env['POWERTOOLS_METRICS_DISABLED'];
      else process.env['POWERTOOLS_METRICS_DISABLED'] = saved.disabled;
      if (saved.dev === undefined) delete process.env['POWERTOOLS_DEV'];
      else process.env['POWERTOOLS_DEV'] = saved.dev;
    }
    const docs = lines.map(
      (l) =>
        JSON.parse(l) as {
          _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
          tenant: string;
        } & Record<string, unknown>,
    );
    // Two documents per item: the totals under `service` only (what alarms sum as plain metrics), then per tenant.
    assert.equal(docs.length, 4);
    const [totals, first] = docs as [(typeof docs)[number], (typeof docs)[number]];
    assert.deepEqual(totals._aws.CloudWatchMetrics[0]!.Dimensions, [['service']]);
    assert.equal(totals['HumanTakeover'], 1);
    const directive = first._aws.CloudWatchMetrics[0]!;
    assert.equal(directive.Namespace, 'Paperclip');
    assert.ok(directive.Dimensions[0]!.includes('tenant'));
    assert.deepEqual(directive.Metrics.map((m) => m.Name).sort(), [...METRIC_NAMES].sort());
    assert.equal(first.tenant, 'acme');
    assert.equal(first['HumanTakeover'], 1);
    assert.equal(first['SessionLost'], 1);
    assert.equal(docs[3]!['RollbackAttempted'], 1);
    assert.equal(docs[3]!['ItemProcessed'], 0, 'a compensation run is not an item');
  });
});

describe('batch progress', () => {
  test('a terminal gets one line redrawn in place with a bar', () => {
    let written = '';
    let t = 0;
    const progress = createProgressRenderer({ isTTY: true, columns: 120, write: (s: string) => (written += s) }, () => (t += 1000));
    progress.update({ claimed: 0, byStatus: {}, phase: 'reading' });
    progress.update({ claimed: 2, byStatus: { DONE: 1, WRITING: 1 }, phase: 'writing', total: 4, finished: 1 });
    progress.finish();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal progress line starts with the ANSI erase-line sequence
    assert.match(written, /\r\x1b\[2K {2}reading the discrepancy list…/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal progress line starts with the ANSI erase-line sequence
    assert.match(written, /\r\x1b\[2K {2}\[######------------------\] 1\/4 items \(done 1, writing 1\)/);
    assert.ok(written.endsWith('\n'));
    assert.equal(written.split('\n').length, 2, 'one line, redrawn');
    assert.equal(progressBar(3, 4, 8), '[######--]');
  });

  test('a pipe or file gets plain lines, only when something changed', () => {
    const lines: string[] = [];
    const progress = createProgressRenderer({ isTTY: false, write: (s: string) => lines.push(s) });
    const p = { claimed: 3, byStatus: { DONE: 2, TAKEOVER: 1 }, phase: 'writing' as const, total: 3, finished: 3 };
    progress.update(p);
    progress.update(p);
    progress.update({ ...p, phase: 'sealing' });
    progress.finish();
    assert.deepEqual(lines, [
      '  … 3/3 items (done 2, takeover 1)\n',
      '  … 3/3 items (done 2, takeover 1) · writing pages and sealing the evidence…\n',
    ]);
    assert.ok(
      lines.every((l) => !l.includes('\x1b')),
      'no control characters in logs',
    );
  });
});
