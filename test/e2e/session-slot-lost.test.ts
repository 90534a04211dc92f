import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { evidenceKey } from '../../src/app/ports/evidence.js';
import { idempotencyKey } from '../../src/domain/task.js';
import { sessionSlotKey } from '../../src/domain/session-slots.js';
import { SessionSlotsStore } from '../../src/adapters/dynamodb/session-slots-store.js';
import type { OpenedSession } from '../../src/browser/identity-sessions.js';
import { useHarness } from '../support/embedded.js';

const ACME = { tenant: 'acme', identity: 'svc-recon-acme' };
const THIEF = 'another-holder';

/**
 * A write's vendor-session slot (docs/deploy.md, "Vendor sessions per identity") taken by another holder while the
 * write runs, on the embedded stack's claims table (dynalite), the simulator and real Chromium: the slot's record is
 * rewritten to another holder, as when the write's lease ran out and someone took the slot. Before the commit click
 * the write stops, not committed, and the workflow retries it with a slot of its own; after the click it finishes,
 * is read back, and the loss is in its audit trail and on its item page.
 */
// One stack per scenario, so each starts from kept sessions and slots no other scenario touched.
for (const scenario of ['before the click', 'after the click'] as const) {
  describe(`a write whose vendor-session slot is taken by another holder ${scenario}`, () => {
    const h = useHarness();
    const only = (name: string, fn: () => Promise<void>) => (name.includes(scenario) ? test(name, fn) : undefined);
    /** When the write session's slot is taken: as the session opens, or once the commit click has settled. */
    let stealAt: 'open' | 'after_click' | undefined;
    let stolenSlot: number | undefined;
    let restore: (() => void) | undefined;

    beforeEach(async () => {
      await h.control.reset({ seed: 23, tenants: [{ id: 'acme', pending: 3, overcharge: 0, processed: 0 }] });
      stealAt = undefined;
      stolenSlot = undefined;
      const sessions = h.paperclip.services.sessions;
      const open = sessions.open.bind(sessions);
      sessions.open = async (...args: Parameters<typeof open>): Promise<OpenedSession> => {
        const session = await open(...args);
        if (args[2] !== 'write' || stealAt === undefined) return session;
        if (stealAt === 'open') {
          stealAt = undefined; // once: the retry keeps its slot
          await steal();
          return session;
        }
        // Called once the commit click settled, before the after picture: the slot goes while the write is past its
        // click. (A kept session the vendor forgot is opened again: the next one is armed the same way.)
        const stopTrace = session.stopTrace;
        session.stopTrace = async () => {
          if (stealAt === 'after_click') {
            stealAt = undefined;
            await steal();
          }
          return stopTrace();
        };
        return session;
      };
      restore = () => {
        sessions.open = open;
      };
    });
    afterEach(async () => {
      restore?.();
      if (stolenSlot !== undefined) {
        const store = new SessionSlotsStore(h.paperclip.services.clients.db, h.paperclip.services.table('claims'));
        await h.paperclip.iam.asOperator(() => store.release({ scope: ACME, slot: stolenSlot!, holder: THIEF, leaseUntil: 0 }));
      }
    });

    /** Rewrites the write's slot record to another holder, conditional on the write still holding it. */
    async function steal(): Promise<void> {
      const db = h.paperclip.services.clients.db;
      const TableName = h.paperclip.services.table('claims');
      await h.paperclip.iam.asOperator(async () => {
        for (let slot = 0; slot < h.paperclip.services.config.vendor_sessions.max_per_identity; slot++) {
          const Key = { key: sessionSlotKey(ACME, slot) };
          const { Item } = await db.send(new GetCommand({ TableName, Key, ConsistentRead: true }));
          const holder = Item?.['holder'];
          if (typeof holder !== 'string' || holder === THIEF) continue;
          await db.send(
            new UpdateCommand({
              TableName,
              Key,
              UpdateExpression: 'SET #h = :thief, leaseUntilMs = :until',
              ConditionExpression: '#h = :ours',
              ExpressionAttributeNames: { '#h': 'holder' },
              ExpressionAttributeValues: { ':thief': THIEF, ':ours': holder, ':until': Date.now() + 600_000 },
            }),
          );
          stolenSlot = slot;
          return;
        }
        throw new Error('the write held no vendor-session slot to take');
      });
    }

    const task = (billNo: string) => ({ taskId: 'T-slot-lost', tenant: 'acme', billNo, action: 'mark_processed' });

    only('taken before the click: the write stops not committed, is retried with a slot of its own, and writes once', async () => {
      const t = task('ACME-202611-0001');
      stealAt = 'open';
      const result = await h.runTask(t);
      assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
      assert.equal(stolenSlot !== undefined, true, 'the slot was taken');
      const journal = (await h.control.journal()).filter((e) => e.billNo === t.billNo).map((e) => e.action);
      assert.deepEqual(journal, ['mark'], 'the vendor took the write once');

      const events = await h.paperclip.services.audit.events(idempotencyKey(t));
      const types = events.map((e) => e.type);
      const failed = events.filter((e) => e.type === 'write_failed');
      assert.equal(failed.length, 1, types.join(', '));
      assert.equal(failed[0]!.data['committed'], false, 'stopped before the click: not committed');
      assert.equal(failed[0]!.data['error'], 'VendorSessionsBusyError');
      assert.match(
        String(failed[0]!.data['message']),
        /slot \d of identity svc-recon-acme for tenant acme was lost before the commit click/,
      );
      assert.equal(types.filter((type) => type === 'write_started').length, 1, 'one commit click, by the retry');
      assert.ok(types.indexOf('write_failed') < types.indexOf('write_started'), 'the stop came before the only click');
      assert.ok(!types.includes('session_slot_lost'), 'nothing was clicked without a slot');
    });

    only('taken after the click: the write finishes and is read back, and the loss is in its trail and on its page', async () => {
      const t = task('ACME-202611-0002');
      stealAt = 'after_click';
      const result = await h.runTask(t);
      assert.equal(result.output['outcome'], 'done', JSON.stringify(result.output));
      assert.equal(stolenSlot !== undefined, true, 'the slot was taken');
      const journal = (await h.control.journal()).filter((e) => e.billNo === t.billNo).map((e) => e.action);
      assert.deepEqual(journal, ['mark']);

      const key = idempotencyKey(t);
      const events = await h.paperclip.services.audit.events(key);
      const types = events.map((e) => e.type);
      const lost = events.filter((e) => e.type === 'session_slot_lost');
      assert.equal(lost.length, 1, types.join(', '));
      assert.equal(lost[0]!.data['slot'], stolenSlot);
      assert.equal(lost[0]!.data['afterCommitClick'], true);
      assert.ok(types.indexOf('write_started') < types.indexOf('session_slot_lost'), 'found after the click');
      assert.ok(types.indexOf('session_slot_lost') < types.lastIndexOf('readback'), 'and the readback still ran');
      assert.equal(events.findLast((e) => e.type === 'readback')?.data['verdict'], 'confirmed');
      assert.ok(!types.includes('write_failed'));

      const claim = (await h.paperclip.services.claims.get(key))!;
      const page = (await h.paperclip.services.evidence.get(evidenceKey(claim, 'index.html')))?.toString() ?? '';
      assert.match(page, /Vendor session slot lost after the commit click/, 'the item page shows the loss');
      assert.match(page, /<code>session_slot_lost<\/code>/);
    });
  });
}
