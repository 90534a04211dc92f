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

/**
 * Runs `work` holding one of the identity's vendor-session slots for the tenant (config `vendor_sessions`), so no
 * more than `max_per_identity` browser sessions act as that identity at once, across every batch and process.
 * The slot is taken before anything at the vendor (a login, a kept context's first page), renewed every third of
 * its lease while `work` runs, and given back after, also when `work` fails. A holder that dies frees its slot when
 * the lease runs out. When no slot frees up within `wait_seconds`, nothing was opened and the step fails with
 * VendorSessionsBusyError, which the workflows retry with backoff.
 */
export async function withSessionSlot<T>(
  s: SlotServices,
  scope: SessionSlotScope,
  work: () => Promise<T>,
  /** Overrides `vendor_sessions.wait_seconds` (0: one try, for work that may as well be skipped). */
  options: { waitSeconds?: number } = {},
): Promise<T> {
  const hold = await takeSessionSlot(s, scope, options);
  const leaseMs = s.config.vendor_sessions.lease_seconds * 1000;
  let current: SessionSlotHold | undefined = hold;
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewing.then(async () => {
        if (!current) return;
        const renewed = await s.sessionSlots.renew(current, leaseMs).catch((error: unknown) => {
          // A renewal that did not reach the table is tried again at the next tick; the lease still runs until then.
          log().warn(`renewing vendor session slot ${current!.slot} of ${scope.identity} failed: ${String(error)}`, { ...scope });
          return current;
        });
        if (!renewed) {
          log().warn(`vendor session slot ${current.slot} of ${scope.identity} was taken by another holder after its lease ran out`, {
            ...scope,
          });
        }
        current = renewed;
      });
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  try {
    return await work();
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
