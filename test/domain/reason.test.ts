import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditEvent } from '../../src/domain/audit-chain.js';
import { buildReason, commitClickFrom, KnownFacts, renderReason, StructuredReason } from '../../src/domain/reason.js';

let seq = 0;
function event(type: string, data: Record<string, unknown>, at = `2026-12-05T12:00:${String(seq).padStart(2, '0')}.000Z`): AuditEvent {
  seq += 1;
  return { chain: 'k-acme_x', seq, at, type, actor: 'svc', data, prevHash: '', hash: '' };
}
const started = () => event('write_started', { tier: 'browser', stage: 'main', step: 2 });
const pictured = (settled: boolean | null) => event('after_pictured', { settled, url: 'http://vendor/list' });
const failed = (committed: boolean) => event('write_failed', { committed, error: 'Error', message: 'boom', evidence: [] });
const readback = (sources: Array<{ source: string; status?: string; error?: string }>) =>
  event('readback', {
    verdict: 'not_applied',
    seen: [],
    source: sources[0]!.source,
    next: 'takeover',
    why: 'x',
    degraded: false,
    evidence: [],
    sources: sources.map((s) => ({ ...s, at: '2026-12-05T12:01:00.000Z' })),
  });

test('the commit click: none reached, reached and answered, reached and never answered', () => {
  assert.deepEqual(commitClickFrom([event('claimed', {})], false), { commitClick: 'not_clicked', clicks: 0 });
  assert.deepEqual(commitClickFrom([started(), pictured(true)], false), { commitClick: 'clicked', clicks: 1 });
  assert.deepEqual(commitClickFrom([started(), failed(true)], false), { commitClick: 'clicked', clicks: 1 });
  assert.deepEqual(commitClickFrom([started()], true), { commitClick: 'clicked', clicks: 1 }, 'an API write that returned');
  assert.deepEqual(commitClickFrom([started()], false), { commitClick: 'unknown', clicks: 1 }, 'the run died after WRITING');
  assert.deepEqual(commitClickFrom([started(), failed(true), started()], false), { commitClick: 'clicked', clicks: 2 }, 'an earlier click');
  // A failure before the commit point records no write_started: nothing was clicked.
  assert.deepEqual(commitClickFrom([failed(false)], false), { commitClick: 'not_clicked', clicks: 0 });
});

test('a false success: clicked, every source named with what it saw, not applied', () => {
  const reason = buildReason({
    headline: 'false success: the write reported success but list still shows PENDING, the state before the write',
    events: [
      started(),
      pictured(false),
      readback([
        { source: 'list', status: 'PENDING' },
        { source: 'detail', status: 'PENDING' },
        { source: 'export', status: 'PENDING' },
      ]),
    ],
    writeReturned: true,
    readback: 'not_applied',
    targetStatus: 'PROCESSED',
    preStatus: 'PENDING',
  });
  StructuredReason.parse(reason);
  assert.equal(reason.known.commitClick, 'clicked');
  assert.equal(reason.known.verdict, 'not_applied');
  const text = renderReason(reason);
  assert.match(text, /^false success: /);
  assert.match(text, /commit click: clicked;/);
  assert.match(text, /list: status=PENDING; detail: status=PENDING; export: status=PENDING/);
  assert.match(text, /seen: write page: the target state did not show within the settled wait; list: /);
  assert.match(text, /verdict: not applied$/);
});

test('only the writer was shown the target: said exactly that, never "applied then reverted" (the write page is not a readback)', () => {
  const reason = buildReason({
    headline: 'WriteNotCommittedError: the vendor says 操作失败; readback: api still shows open, the state before the write',
    events: [
      started(),
      pictured(true),
      failed(true),
      readback([
        { source: 'api', status: 'open' },
        { source: 'detail', status: 'open' },
      ]),
    ],
    writeReturned: false,
    readback: 'not_applied',
    targetStatus: 'approved',
    preStatus: 'open',
  });
  assert.equal(reason.known.verdict, 'shown_to_writer_not_found');
  assert.equal(reason.known.commitClick, 'clicked');
  assert.deepEqual(
    reason.known.observations.map((o) => [o.source, o.kind]),
    [
      ['write page', 'writer'],
      ['api', 'readback'],
      ['detail', 'readback'],
    ],
    'each reading says whether it is the writer or an independent source',
  );
  const text = renderReason(reason);
  assert.match(
    text,
    /^shown to the writer, not found by any readback source: the write page showed approved \(the target\) at .*, then api read open/,
  );
  assert.match(text, /no readback source saw the target/);
  assert.match(text, /the step said: WriteNotCommittedError: /);
  assert.doesNotMatch(text, /applied then reverted|reverted by the vendor/);
  assert.match(
    text,
    /seen: write page: status=approved; api: status=open; detail: status=open; verdict: shown to the writer, not found by any readback source$/,
  );
});

test('applied then reverted: an independent source read the target, a later reading the state before: said so, not "not committed"', () => {
  const reason = buildReason({
    headline: 'write did not land: detail shows open, the state before the write',
    events: [
      started(),
      pictured(true),
      readback([{ source: 'api', status: 'approved' }]),
      readback([
        { source: 'detail', status: 'open' },
        { source: 'api', status: 'open' },
      ]),
    ],
    writeReturned: true,
    readback: 'not_applied',
    targetStatus: 'approved',
    preStatus: 'open',
  });
  assert.equal(reason.known.verdict, 'applied_then_reverted');
  const text = renderReason(reason);
  assert.match(
    text,
    /^applied then reverted: api saw approved \(the target\) at .*, then detail saw open \(the state before the write\)/,
    'the reading that saw it applied is the readback source, not the write page',
  );
  assert.match(text, /the step said: write did not land: /);
  assert.match(text, /verdict: applied, then reverted by the vendor$/);
});

test('no readback: not read back; sources that disagree are named as such; an inconclusive readback', () => {
  const notRead = buildReason({ headline: 'SessionLostError: the vendor says 权限已变更', events: [], writeReturned: false });
  assert.equal(
    renderReason(notRead),
    'SessionLostError: the vendor says 权限已变更 — commit click: not clicked; seen: nothing read; verdict: not read back',
  );
  const disagree = buildReason({
    headline: 'write did not land: list still shows PENDING',
    events: [
      readback([
        { source: 'list', status: 'PENDING' },
        { source: 'export', status: 'PROCESSED' },
      ]),
    ],
    writeReturned: false,
    readback: 'not_applied',
    targetStatus: 'PROCESSED',
    preStatus: 'PENDING',
  });
  assert.equal(disagree.known.verdict, 'sources_disagree');
  const inconclusive = buildReason({
    headline: 'readback inconclusive: no settled state',
    events: [
      started(),
      pictured(null),
      readback([
        { source: 'list', status: 'PROCESSING' },
        { source: 'detail', error: 'no row' },
      ]),
    ],
    writeReturned: true,
    readback: 'unknown',
    targetStatus: 'PROCESSED',
    preStatus: 'PENDING',
  });
  assert.equal(inconclusive.known.verdict, 'inconclusive');
  assert.match(renderReason(inconclusive), /list: status=PROCESSING; detail: unreadable \(no row\)/);
});

test('the facts are a zod type: a record of another shape is refused by field', () => {
  const bad = KnownFacts.safeParse({ commitClick: 'maybe', clicks: 0, observations: [], verdict: 'not_read' });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error?.issues[0]?.path, ['commitClick']);
});
