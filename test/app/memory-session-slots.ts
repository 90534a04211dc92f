import { sessionSlotKey, type SessionSlotScope } from '../../src/domain/session-slots.js';
import type { SessionSlotHold, SessionSlotsPort } from '../../src/app/ports/session-slots.js';
import type { PaperclipConfig } from '../../src/config/schema.js';

/**
 * The session slots in memory, with the guarantees of the DynamoDB adapter (a take holds only on a free or expired
 * slot; renew and release only for the holder), against a clock the test moves.
 */
export class MemorySessionSlots implements SessionSlotsPort {
  readonly rows = new Map<string, { holder?: string; leaseUntil: number }>();
  /** Epoch ms the leases are read against. */
  clock = Date.now();

  constructor(private readonly now: () => number = () => this.clock) {}

  async tryTake(
    scope: SessionSlotScope,
    holder: string,
    options: { slots: number; leaseMs: number },
  ): Promise<SessionSlotHold | undefined> {
    for (let slot = 0; slot < options.slots; slot++) {
      const key = sessionSlotKey(scope, slot);
      const row = this.rows.get(key);
      const now = this.now();
      if (row?.holder !== undefined && row.leaseUntil >= now) continue;
      const leaseUntil = now + options.leaseMs;
      this.rows.set(key, { holder, leaseUntil });
      return { scope, slot, holder, leaseUntil };
    }
    return undefined;
  }

  async renew(hold: SessionSlotHold, leaseMs: number): Promise<SessionSlotHold | undefined> {
    const key = sessionSlotKey(hold.scope, hold.slot);
    if (this.rows.get(key)?.holder !== hold.holder) return undefined;
    const leaseUntil = this.now() + leaseMs;
    this.rows.set(key, { holder: hold.holder, leaseUntil });
    return { ...hold, leaseUntil };
  }

  async release(hold: SessionSlotHold): Promise<boolean> {
    const key = sessionSlotKey(hold.scope, hold.slot);
    if (this.rows.get(key)?.holder !== hold.holder) return false;
    this.rows.set(key, { leaseUntil: 0 });
    return true;
  }

  /** Slots of the scope held now (unexpired). */
  heldOf(scope: SessionSlotScope, slots: number): number {
    let held = 0;
    for (let slot = 0; slot < slots; slot++) {
      const row = this.rows.get(sessionSlotKey(scope, slot));
      if (row?.holder !== undefined && row.leaseUntil >= this.now()) held += 1;
    }
    return held;
  }
}

/** The config part the slot logic reads. */
export function slotConfig(vendorSessions: Partial<PaperclipConfig['vendor_sessions']> = {}): Pick<PaperclipConfig, 'vendor_sessions'> {
  return { vendor_sessions: { max_per_identity: 2, wait_seconds: 0, lease_seconds: 60, ...vendorSessions } };
}
