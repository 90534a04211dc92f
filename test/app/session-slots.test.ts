import { after, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamoDb, createTables, type LocalDynamoDb } from '../../twin/aws/dynamodb.js';
import { awsClientConfig } from '../../twin/aws/aws-config.js';
import { SessionSlotsStore } from '../../src/adapters/dynamodb/session-slots-store.js';
import type { SessionSlotsPort } from '../../src/app/ports/session-slots.js';
import { sessionSlotKey } from '../../src/domain/session-slots.js';
import { withSessionSlot } from '../../src/app/session-slots.js';
import { withSession } from '../../src/app/sessions.js';
import { VendorSessionsBusyError } from '../../src/domain/errors.js';
import { tenantKeyPrefix } from '../../src/domain/task.js';
import type { IdentitySessions, OpenedSession } from '../../src/browser/identity-sessions.js';
import { MemorySessionSlots, slotConfig } from './memory-session-slots.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const ACME = { tenant: 'acme', identity: 'svc-recon-acme' };
const LEASE = 10_000;

/**
 * The rules every implementation of the port keeps, run against the in-memory fake and against the DynamoDB adapter
 * on dynalite: a slot is taken only when free or expired, at most `slots` at once per tenant and identity, renewed
 * and released only by its holder.
 */
function slotRules(name: string, make: () => Promise<{ slots: SessionSlotsPort; clock: { now: number } }>) {
  describe(`session slots (${name})`, () => {
    test('at most `slots` holders at once; a released slot is taken again', async () => {
      const { slots } = await make();
      const a = await slots.tryTake(ACME, 'holder-a', { slots: 2, leaseMs: LEASE });
      const b = await slots.tryTake(ACME, 'holder-b', { slots: 2, leaseMs: LEASE });
      assert.deepEqual([a?.slot, b?.slot], [0, 1]);
      assert.equal(await slots.tryTake(ACME, 'holder-c', { slots: 2, leaseMs: LEASE }), undefined, 'the cap holds');
      assert.equal(await slots.release({ ...a!, holder: 'holder-c' }), false, 'only the holder releases');
      assert.equal(await slots.tryTake(ACME, 'holder-c', { slots: 2, leaseMs: LEASE }), undefined);
      assert.equal(await slots.release(a!), true);
      assert.equal((await slots.tryTake(ACME, 'holder-c', { slots: 2, leaseMs: LEASE }))?.slot, 0);
      assert.equal(await slots.release(a!), false, 'a release after losing the slot changes nothing');
    });

    test("another tenant's or identity's slots are their own", async () => {
      const { slots } = await make();
      assert.ok(await slots.tryTake(ACME, 'a', { slots: 1, leaseMs: LEASE }));
      assert.equal(await slots.tryTake(ACME, 'b', { slots: 1, leaseMs: LEASE }), undefined);
      assert.ok(await slots.tryTake({ tenant: 'globex', identity: ACME.identity }, 'b', { slots: 1, leaseMs: LEASE }));
      assert.ok(await slots.tryTake({ tenant: 'acme', identity: 'svc-other' }, 'b', { slots: 1, leaseMs: LEASE }));
    });

    test('a holder that stops renewing loses its slot when the lease runs out; renewing keeps it', async () => {
      const { slots, clock } = await make();
      const scope = { tenant: 'acme', identity: 'svc-expiry' };
      const held = await slots.tryTake(scope, 'crashed', { slots: 1, leaseMs: LEASE });
      assert.ok(held);
      clock.now += LEASE - 1;
      assert.equal(await slots.tryTake(scope, 'next', { slots: 1, leaseMs: LEASE }), undefined, 'not before the lease ran out');
      clock.now += 2;
      const next = await slots.tryTake(scope, 'next', { slots: 1, leaseMs: LEASE });
      assert.equal(next?.slot, 0, 'an expired slot is free');
      assert.equal(await slots.renew(held, LEASE), undefined, 'the old holder learns it lost the slot');
      assert.equal(await slots.release(held), false);

      clock.now += LEASE - 1;
      const renewed = await slots.renew(next!, LEASE);
      assert.ok(renewed && renewed.leaseUntil > next!.leaseUntil, 'a renewal moves the lease on');
      clock.now += 2; // past the first lease, within the renewed one
      assert.equal(await slots.tryTake(scope, 'third', { slots: 1, leaseMs: LEASE }), undefined, 'a renewed slot stays taken');
    });
  });
}

const memoryClock = { now: 1_700_000_000_000 };
slotRules('in memory', async () => ({ slots: new MemorySessionSlots(() => memoryClock.now), clock: memoryClock }));

describe('on dynalite', () => {
  let dynamo: LocalDynamoDb;
  let client: DynamoDBClient;
  let db: DynamoDBDocumentClient;
  const clock = { now: 1_700_000_000_000 };
  before(async () => {
    dynamo = await startLocalDynamoDb();
    client = new DynamoDBClient(awsClientConfig(dynamo.endpoint));
    await createTables(client, 'ss');
    db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  });
  after(async () => {
    client?.destroy();
    await dynamo?.stop();
  });

  // Each test on tables of its own, as each gets a fresh fake.
  let tables = 0;
  slotRules('DynamoDB adapter', async () => {
    const prefix = `ss${++tables}`;
    await createTables(client, prefix);
    return { slots: new SessionSlotsStore(db, `${prefix}-claims`, () => clock.now), clock };
  });

  test('a slot taken by another holder while the work runs: the lease says so, and the work is stopped before it acts', async () => {
    const prefix = `ss${++tables}`;
    await createTables(client, prefix);
    const store = new SessionSlotsStore(db, `${prefix}-claims`, () => clock.now);
    const scope = { tenant: 'acme', identity: 'svc-stolen' };
    const s = { sessionSlots: store, config: slotConfig({ max_per_identity: 1, lease_seconds: 30 }) };
    const failure = await withSessionSlot(s, scope, async (lease) => {
      await lease.holdOrStop('the commit click');
      assert.equal(lease.lost(), undefined, 'held: nothing lost, the work goes on');
      // The lease runs out (the process stalled) and another holder takes the slot.
      clock.now += 30_001;
      assert.ok(await store.tryTake(scope, 'thief', { slots: 1, leaseMs: 30_000 }));
      return lease.holdOrStop('the commit click');
    }).catch((error: unknown) => error);
    assert.ok(failure instanceof VendorSessionsBusyError, String(failure));
    assert.equal(failure.name, 'VendorSessionsBusyError', 'the name the workflows retry');
    assert.match(failure.message, /slot 0 of identity svc-stolen for tenant acme was lost before the commit click.*not committed/);
    assert.equal(failure.details['slotLost'], true);
    const { Item } = await db.send(new GetCommand({ TableName: `${prefix}-claims`, Key: { key: sessionSlotKey(scope, 0) } }));
    assert.equal(Item?.['holder'], 'thief', "the release after the work leaves the other holder's slot alone");
  });

  test('a loss found after the work acted is reported by check(), and the work is not stopped', async () => {
    const prefix = `ss${++tables}`;
    await createTables(client, prefix);
    const store = new SessionSlotsStore(db, `${prefix}-claims`, () => clock.now);
    const scope = { tenant: 'acme', identity: 'svc-stolen-late' };
    const s = { sessionSlots: store, config: slotConfig({ max_per_identity: 1, lease_seconds: 30 }) };
    const leaseEnds = clock.now + 30_000;
    const result = await withSessionSlot(s, scope, async (lease) => {
      clock.now += 30_001;
      await store.tryTake(scope, 'thief', { slots: 1, leaseMs: 30_000 });
      const loss = await lease.check();
      return { loss, again: lease.lost() };
    });
    assert.deepEqual({ slot: result.loss?.slot, leaseUntil: result.loss?.leaseUntil }, { slot: 0, leaseUntil: leaseEnds });
    assert.equal(result.again, result.loss, 'the loss stays known');
  });

  test("a slot is a record under the tenant's key prefix, which the tenant session's LeadingKeys confine", async () => {
    const slots = new SessionSlotsStore(db, 'ss-claims', () => clock.now);
    const scope = { tenant: 'initech', identity: 'svc-recon-initech' };
    await slots.tryTake(scope, 'h', { slots: 1, leaseMs: LEASE });
    const key = sessionSlotKey(scope, 0);
    assert.ok(key.startsWith(tenantKeyPrefix('initech')));
    const { Item } = await db.send(new GetCommand({ TableName: 'ss-claims', Key: { key } }));
    assert.equal(Item?.['holder'], 'h');
    assert.equal(Item?.['status'], undefined, 'no status: the claims scans never read a slot as a claim');
    assert.equal(Item?.['taskId'], undefined, 'no taskId: never in the task index');
  });
});

describe('holding a slot around the work', () => {
  const services = (vendorSessions: Parameters<typeof slotConfig>[0] = {}, slots = new MemorySessionSlots(Date.now)) => ({
    sessionSlots: slots,
    config: slotConfig(vendorSessions),
  });

  test('no more than max_per_identity works run at once; every one runs', async () => {
    const s = services({ max_per_identity: 2, wait_seconds: 60 });
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        withSessionSlot(s, ACME, async () => {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setImmediate(resolve));
          running -= 1;
          done.push(n);
        }),
      ),
    );
    assert.equal(most, 2);
    assert.deepEqual(done.sort(), [1, 2, 3, 4, 5]);
    assert.equal(s.sessionSlots.heldOf(ACME, 2), 0, 'every slot is given back');
  });

  test('when no slot frees up in time the step fails with VendorSessionsBusyError, and the work never ran', async () => {
    const s = services({ max_per_identity: 1, wait_seconds: 0 });
    await s.sessionSlots.tryTake(ACME, 'another batch', { slots: 1, leaseMs: LEASE });
    let ran = false;
    const failure = await withSessionSlot(s, ACME, async () => {
      ran = true;
    }).catch((error: unknown) => error);
    assert.ok(failure instanceof VendorSessionsBusyError);
    assert.equal(failure.name, 'VendorSessionsBusyError');
    assert.match(failure.message, /svc-recon-acme .*acme.*vendor_sessions\.max_per_identity/);
    assert.equal(ran, false);
  });

  test('a failed work gives its slot back', async () => {
    const s = services({ max_per_identity: 1 });
    await assert.rejects(
      withSessionSlot(s, ACME, async () => {
        throw new Error('the page broke');
      }),
      /the page broke/,
    );
    assert.equal(s.sessionSlots.heldOf(ACME, 1), 0);
  });

  test('the lease is renewed every third of it while the work runs', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const slots = new MemorySessionSlots(() => memoryClock.now);
      const s = services({ max_per_identity: 1, lease_seconds: 30 }, slots);
      const renewals: number[] = [];
      const renew = slots.renew.bind(slots);
      slots.renew = async (hold, leaseMs) => {
        renewals.push(leaseMs);
        return renew(hold, leaseMs);
      };
      let finish!: () => void;
      const working = withSessionSlot(s, ACME, () => new Promise<void>((resolve) => (finish = resolve)));
      while (!finish) await new Promise((resolve) => setImmediate(resolve));
      mock.timers.tick(10_000);
      mock.timers.tick(10_000);
      await new Promise((resolve) => setImmediate(resolve));
      finish();
      await working;
      assert.deepEqual(renewals, [30_000, 30_000]);
      assert.equal(slots.heldOf(ACME, 1), 0);
    } finally {
      mock.timers.reset();
    }
  });

  test('withSession takes a slot before any session opens: with every slot held, nothing logs in', async () => {
    const slots = new MemorySessionSlots(Date.now);
    await slots.tryTake(ACME, 'another batch', { slots: 1, leaseMs: LEASE });
    const opened: string[] = [];
    const session = { discardOnClose: () => undefined, close: async () => undefined } as unknown as OpenedSession;
    const sessions = {
      open: async (identity: string) => {
        opened.push(identity);
        return session;
      },
      forget: () => undefined,
    } as unknown as IdentitySessions;
    const s = {
      sessions,
      secret: async () => ({ username: 'u', password: 'p' }),
      sessionSlots: slots,
      config: slotConfig({ max_per_identity: 1 }),
    };
    await assert.rejects(
      withSession(s, ACME.identity, 'write', { trace: false, tenant: ACME.tenant }, async () => 'written'),
      VendorSessionsBusyError,
    );
    assert.deepEqual(opened, []);
    await slots.release({ scope: ACME, slot: 0, holder: 'another batch', leaseUntil: 0 });
    assert.equal(await withSession(s, ACME.identity, 'write', { trace: false, tenant: ACME.tenant }, async () => 'written'), 'written');
    assert.deepEqual(opened, [ACME.identity]);
    assert.equal(slots.heldOf(ACME, 1), 0, 'given back after the work');
  });
});
