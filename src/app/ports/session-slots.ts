import type { SessionSlotScope } from '../../domain/session-slots.js';

/** One slot as its holder has it: which, and until when (epoch ms) nobody else may take it. */
export interface SessionSlotHold {
  scope: SessionSlotScope;
  slot: number;
  holder: string;
  leaseUntil: number;
}

/**
 * The per-identity cap on vendor sessions, across processes (src/domain/session-slots.ts): a slot is taken by a
 * conditional write that holds only when it is free or its lease ran out, renewed while held, and given back
 * after. The DynamoDB adapter implements it (src/adapters/dynamodb/session-slots-store.ts); test/app fakes it.
 */
export interface SessionSlotsPort {
  /** Takes the first free (or expired) of the scope's `slots` slots for `holder`; undefined when every one is held. */
  tryTake(scope: SessionSlotScope, holder: string, options: { slots: number; leaseMs: number }): Promise<SessionSlotHold | undefined>;
  /** Moves the lease on if `hold.holder` still holds the slot; undefined when it lost it (its lease ran out and another took it). */
  renew(hold: SessionSlotHold, leaseMs: number): Promise<SessionSlotHold | undefined>;
  /** Frees the slot if `hold.holder` still holds it; false (and nothing changed) otherwise. */
  release(hold: SessionSlotHold): Promise<boolean>;
}
