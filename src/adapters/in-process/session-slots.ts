import { sessionSlotKey, type SessionSlotScope } from '../../domain/session-slots.js';
import type { SessionSlotHold, SessionSlotsPort } from '../../app/ports/session-slots.js';

/**
 * The session slots of one process, for a command that runs alone without the tables (`paperclip sitepack probe`):
 * the same rules as the DynamoDB adapter (a take holds only on a free or expired slot; renew and release only for
 * the holder), kept in memory. It caps nothing beyond this process.
 */
export class InProcessSessionSlots implements SessionSlotsPort {
  protected readonly rows = new Map<string, { holder?: string; leaseUntil: number }>();

  constructor(
    /** The clock leases are read against (epoch ms). */
    protected readonly now: () => number = Date.now,
  ) {}

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
}
