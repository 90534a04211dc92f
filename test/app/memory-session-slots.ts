import { sessionSlotKey, type SessionSlotScope } from '../../src/domain/session-slots.js';
import { InProcessSessionSlots } from '../../src/adapters/in-process/session-slots.js';
import type { PaperclipConfig } from '../../src/config/schema.js';

/**
 * The session slots in memory for the app layer's tests: the in-process adapter (the DynamoDB adapter's rules:
 * a take holds only on a free or expired slot; renew and release only for the holder), against a clock the test
 * gives, and able to say how many slots are held.
 */
export class MemorySessionSlots extends InProcessSessionSlots {
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
