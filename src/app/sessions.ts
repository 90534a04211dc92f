import type { Services } from './services.js';
import type { OpenedSession, SessionPurpose } from '../browser/identity-sessions.js';
import { SessionLostError } from '../domain/errors.js';

/**
 * Runs `work` in a browser context of the identity that no other task is
 * using. If the work fails, the context is closed rather than kept; a lost
 * session is forgotten at once, so the next task logs in anew instead of
 * reusing a revoked cookie. The error still propagates (session loss is loud).
 */
export async function withSession<T>(
  s: Services,
  identity: string,
  purpose: SessionPurpose,
  options: { trace: boolean },
  work: (session: OpenedSession) => Promise<T>,
): Promise<T> {
  const session = await s.sessions.open(identity, await s.secret(identity), purpose, options).catch((error: unknown) => {
    if (error instanceof SessionLostError) s.sessions.forget(identity);
    throw error;
  });
  try {
    return await work(session);
  } catch (error) {
    session.discardOnClose();
    if (error instanceof SessionLostError) s.sessions.forget(identity);
    throw error;
  } finally {
    await session.close().catch(() => undefined);
  }
}
