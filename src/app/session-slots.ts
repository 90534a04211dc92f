import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from './services.js';
import type { PaperclipConfig } from '../config/schema.js';
import type { SessionSlotHold } from './ports/session-slots.js';
import type { SessionSlotScope } from '../domain/session-slots.js';
import { VendorSessionsBusyError } from '../domain/errors.js';
import { log } from '../observability/telemetry.js';

/** What taking a slot needs: the cap's config and the slots. */
export type SlotServices = Pick<Services, 'sessionSlots'> & { config: Pick<PaperclipConfig, 'vendor_sessions'> };

/** Between two tries for a slot: short, with jitter, so waiting tasks do not retry in step. */
const POLL_MS = { min: 200, max: 700 } as const;

/** A slot found lost while its work ran: which slot, and when its holder learned it. */
export interface SlotLoss {
  slot: number;
  /** ISO time the loss was found (a renewal whose condition no longer held). */
  foundAt: string;
  /** The lease this holder last had (epoch ms): another holder may take the slot once it has run out. */
  leaseUntil: number;
}

/**
 * The work's view of its slot. A lease is renewed in the background; a renewal that finds the slot taken by another
 * holder (the lease ran out, e.g. the process stalled, and someone took it) records the loss here. The work decides
 * what a loss means for it: a write stops before its commit click (`holdOrStop`), and after it records the loss.
 */
export interface SlotLease {
  /** The loss, if one was found so far. */
  lost(): SlotLoss | undefined;
  /** Renews now (one conditional write) and returns the loss, if the slot is no longer this holder's. */
  check(): Promise<SlotLoss | undefined>;
  /** Renews now; when the slot is lost throws VendorSessionsBusyError (`details.slotLost`), which the workflows retry. */
  holdOrStop(before: string): Promise<void>;
}

/**
 * Runs `work` holding one of the identity's vendor-session slots for the tenant (config `vendor_sessions`), so no
 * more than `max_per_identity` browser sessions act as that identity at once, across every batch and process.
 * The slot is taken before anything at the vendor (a login, a kept context's first page), renewed every third of
 * its lease while `work` runs, and given back after, also when `work` fails. A holder that dies frees its slot when
 * the lease runs out. When no slot frees up within `wait_seconds`, nothing was opened and the step fails with
 * VendorSessionsBusyError, which the workflows retry with backoff. A holder that outlives its lease may find the slot
 * taken: `work` is told through its SlotLease and decides (the write: src/app/guarded-write/write.ts).
 */
export async function withSessionSlot<T>(
  s: SlotServices,
  scope: SessionSlotScope,
  work: (lease: SlotLease) => Promise<T>,
  /** Overrides `vendor_sessions.wait_seconds` (0: one try, for work that may as well be skipped). */
  options: { waitSeconds?: number } = {},
): Promise<T> {
  const hold = await takeSessionSlot(s, scope, options);
  const leaseMs = s.config.vendor_sessions.lease_seconds * 1000;
  let current: SessionSlotHold | undefined = hold;
  let loss: SlotLoss | undefined;
  let renewing: Promise<unknown> = Promise.resolve();
  // Renewals run one after another (the background ones and the work's own checks), so none overtakes another.
  const renewOnce = () => {
    renewing = renewing.then(async () => {
      if (!current) return;
      const held: SessionSlotHold = current;
      const renewed = await s.sessionSlots.renew(held, leaseMs).catch((error: unknown) => {
        // A renewal that did not reach the table is tried again at the next tick; the lease still runs until then.
        log().warn(`renewing vendor session slot ${held.slot} of ${scope.identity} failed: ${String(error)}`, { ...scope });
        return held;
      });
      if (!renewed) {
        loss = { slot: held.slot, foundAt: new Date().toISOString(), leaseUntil: held.leaseUntil };
        log().warn(`vendor session slot ${held.slot} of ${scope.identity} was taken by another holder after its lease ran out`, {
          ...scope,
        });
      }
      current = renewed;
    });
    return renewing;
  };
  const lease: SlotLease = {
    lost: () => loss,
    check: async () => {
      await renewOnce();
      return loss;
    },
    holdOrStop: async (before) => {
      const lost = await lease.check();
      if (!lost) return;
      throw new VendorSessionsBusyError(
        `vendor session slot ${lost.slot} of identity ${scope.identity} for tenant ${scope.tenant} was lost before ${before} ` +
          `(another holder took it; this holder's lease ran to ${new Date(lost.leaseUntil).toISOString()}): not committed, nothing was clicked; ` +
          'the step is retried with a slot of its own (if this repeats, raise vendor_sessions.lease_seconds above the longest stall)',
        { ...scope, slot: lost.slot, slotLost: true },
      );
    },
  };
  const timer = setInterval(() => void renewOnce(), Math.max(1, Math.floor(leaseMs / 3)));
  try {
    return await work(lease);
  } finally {
    clearInterval(timer);
    await renewing;
    const last = current ?? hold;
    await s.sessionSlots.release(last).catch((error: unknown) => {
      // Not given back: it frees itself when its lease runs out.
      log().warn(`releasing vendor session slot ${last.slot} of ${scope.identity} failed: ${String(error)}`, { ...scope });
    });
  }
}

/** Takes a slot, trying again until `wait_seconds` have passed; VendorSessionsBusyError when none came free. */
export async function takeSessionSlot(
  s: SlotServices,
  scope: SessionSlotScope,
  options: { waitSeconds?: number } = {},
): Promise<SessionSlotHold> {
  const { max_per_identity: slots, lease_seconds: leaseSeconds } = s.config.vendor_sessions;
  const waitSeconds = options.waitSeconds ?? s.config.vendor_sessions.wait_seconds;
  const holder = randomUUID();
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const hold = await s.sessionSlots.tryTake(scope, holder, { slots, leaseMs: leaseSeconds * 1000 });
    if (hold) return hold;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new VendorSessionsBusyError(
        `all ${slots} vendor session slot(s) of identity ${scope.identity} for tenant ${scope.tenant} stayed taken for ${waitSeconds} s; ` +
          'the step is retried later (raise vendor_sessions.max_per_identity only as far as the vendor allows simultaneous logins)',
        { ...scope, slots, waitSeconds },
      );
    }
    await sleep(Math.min(left, POLL_MS.min + Math.random() * (POLL_MS.max - POLL_MS.min)));
  }
}
