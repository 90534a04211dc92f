import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { KnownFacts } from '../../src/domain/known-facts.js';
import { useHarness } from '../support/embedded.js';

/**
 * A takeover reason says what is known, end to end on the embedded stack (real Chromium, the simulator): whether
 * the commit click happened, what each readback source saw, and, where only the writer's own page was shown the
 * change (no readback source found it), exactly that. The same facts are on the claim, the queue entry, the audit event and record.json.
 */
describe('takeover reasons say what is known', () => {
  const h = useHarness();
  beforeEach(async () => {
    await h.control.reset({ seed: 17, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
  });
  const task = (billNo: string) => ({ taskId: 'T-reasons', tenant: 'acme', billNo, action: 'mark_processed' });

  /** The facts wherever they are stored: each must be the same typed record. */
  async function stored(key: string) {
    const s = h.paperclip.services;
    const claim = (await s.claims.get(key))!;
    const entry = (await s.takeovers.get(key))!;
    const event = (await s.audit.events(key)).findLast((e) => e.type === 'takeover')!;
    const record = JSON.parse((await s.evidence.get(evidenceKey(claim, 'record.json')))!.toString());
    const known = KnownFacts.parse(entry.known);
    for (const [where, other] of [
      ['claim', claim.known],
      ['audit event', event.data['known']],
      ['record.json', record.known],
    ] as const) {
      assert.deepEqual(other, known, `${where} holds the same facts as the queue entry`);
    }
    assert.equal(claim.reason, entry.reason);
    assert.equal(event.data['reason'], entry.reason);
    return { known, reason: entry.reason, claim };
  }

  test('a false success (toast, nothing committed): the click happened, every source named with what it read', async () => {
    const t = task('ACME-202611-0001');
    await h.control.setFaults([{ kind: 'half_success', bill: t.billNo }]);
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'takeover');
    const { known, reason } = await stored(idempotencyKey(t));
    assert.equal(result.output['reason'], reason);
    assert.equal(known.commitClick, 'clicked');
    assert.equal(known.verdict, 'not_applied');
    assert.match(reason, /^false success: /);
    assert.match(reason, / — commit click: clicked; seen: /);
    // Each configured readback source (config: list, detail, export) is named with the state it read.
    for (const source of ['list', 'detail', 'export']) assert.match(reason, new RegExp(`${source}: status=PENDING`), source);
    assert.match(reason, /verdict: not applied$/);
    assert.deepEqual(
      (await h.control.journal()).filter((e) => e.billNo === t.billNo),
      [],
      'the vendor committed nothing',
    );
  });

  test('the vendor shows only its writer the change: the reason says exactly that, not "applied then reverted"', async () => {
    const t = task('ACME-202611-0002');
    await h.control.setFaults([{ kind: 'applied_then_reverted', bill: t.billNo, times: 1 }]);
    const result = await h.runTask(t);
    assert.equal(result.output['outcome'], 'takeover');
    const journal = (await h.control.journal()).filter((e) => e.billNo === t.billNo).map((e) => e.action);
    assert.deepEqual(journal, ['mark', 'revert'], 'the vendor took the write once and undid it itself');
    const { known, reason } = await stored(idempotencyKey(t));
    assert.equal(known.commitClick, 'clicked');
    // Only the page that clicked saw PROCESSED; every readback source (never that page) read PENDING: no independent
    // source saw the write applied, so "applied then reverted" would claim more than is known.
    assert.equal(known.verdict, 'shown_to_writer_not_found');
    assert.deepEqual(
      known.observations.filter((o) => o.status === 'PROCESSED').map((o) => [o.source, o.kind]),
      [['write page', 'writer']],
    );
    assert.match(
      reason,
      /^shown to the writer, not found by any readback source: the write page showed PROCESSED \(the target\) at [^,]+, then \w+ read PENDING/,
    );
    assert.match(reason, /the step said: false success: /);
    assert.match(reason, /seen: write page: status=PROCESSED; list: status=PENDING; detail: status=PENDING; export: status=PENDING;/);
    assert.match(reason, /verdict: shown to the writer, not found by any readback source$/);
    assert.doesNotMatch(reason, /applied then reverted|reverted by the vendor|not committed|did not land/);
  });
});
