import type { Services } from './services.js';
import type { OpenedSession, SessionPurpose } from '../browser/identity-sessions.js';
import { SessionLostError } from '../domain/errors.js';
import { log } from '../observability/telemetry.js';
import { withSessionSlot, type SlotLease, type SlotServices } from './session-slots.js';

/**
 * Runs `work` in a browser context of the identity that no other task is
 * using. If the work fails, the context is closed rather than kept; a lost
 * session is forgotten at once, so the next task logs in anew instead of
 * reusing a revoked cookie. The error still propagates (session loss is loud).
 *
 * A kept context is reused without first asking the vendor whether its session
 * still holds (that would be a vendor request per task). When it turns out gone
 * and the work has not acted yet (no commit click: `markActed`), the identity
 * logs in again and the work starts over, once; a second loss, or one after
 * acting, is the task's failure.
 *
 * All of it runs holding one of the identity's vendor-session slots for `options.tenant` (withSessionSlot): at most
 * `vendor_sessions.max_per_identity` tasks are logged in and working as the identity at once, across processes;
 * when none frees up in time, nothing is opened and VendorSessionsBusyError is thrown (the workflows retry it). The
 * work gets the slot's lease (SlotLease) too: a write checks it holds its slot before its commit click.
 */
export async function withSession<T>(
  s: Pick<Services, 'sessions' | 'secret'> & SlotServices,
  identity: string,
  purpose: SessionPurpose,
  options: { trace: boolean; tenant: string },
  work: (session: OpenedSession, lease: SlotLease) => Promise<T>,
): Promise<T> {
  return withSessionSlot(s, { tenant: options.tenant, identity }, (lease) =>
    openAndWork(s, identity, purpose, options, (session) => work(session, lease)),
  );
}

async function openAndWork<T>(
  s: Pick<Services, 'sessions' | 'secret'>,
  identity: string,
  purpose: SessionPurpose,
  options: { trace: boolean },
  work: (session: OpenedSession) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const session = await s.sessions.open(identity, await s.secret(identity), purpose, options).catch((error: unknown) => {
      if (error instanceof SessionLostError) s.sessions.forget(identity);
      throw error;
    });
    try {
      return await work(session);
    } catch (error) {
      session.discardOnClose();
      if (error instanceof SessionLostError) {
        s.sessions.forget(identity);
        if (attempt === 1 && session.reused && !session.acted) {
          log().info(`a kept vendor session of ${identity} (${purpose}) was gone; logging in again and starting over: ${error.message}`, {
            identity,
            purpose,
          });
          continue;
        }
      }
      throw error;
    } finally {
      await session.close().catch(() => undefined);
    }
  }
}
