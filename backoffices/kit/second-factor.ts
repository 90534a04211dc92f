import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** A login that passed its password and waits for the TOTP code, known by the `mfa` cookie. */
interface PendingLogin {
  username: string;
  next: string | undefined;
  expiresAt: number;
  attempts: number;
}

/** How long the code page waits for a code, and how many wrong codes it takes before the password is asked again. */
const PENDING_TTL_MS = 5 * 60_000;
const MAX_ATTEMPTS = 5;

export const PENDING_COOKIE = 'mfa';

export class PendingSecondFactors {
  private readonly pending = new Map<string, PendingLogin>();

  create(username: string, next: string | undefined, now = Date.now()): string {
    const token = randomBytes(18).toString('base64url');
    this.pending.set(token, { username, next, expiresAt: now + PENDING_TTL_MS, attempts: 0 });
    return token;
  }

  get(token: string | undefined, now = Date.now()): PendingLogin | undefined {
    if (token === undefined) return undefined;
    const login = this.pending.get(token);
    if (!login || login.expiresAt < now || login.attempts >= MAX_ATTEMPTS) {
      this.pending.delete(token);
      return undefined;
    }
    return login;
  }

  /**
   * Whether `code` is the pending login's code (see `codeAccepted`): a right one ends the pending login, a wrong
   * one is counted, and the login is dropped once it has had its attempts.
   */
  answer(token: string, secret: string, periodSeconds: number, code: string): boolean {
    if (!codeAccepted(secret, periodSeconds, code)) {
      const login = this.pending.get(token);
      if (login) login.attempts += 1;
      return false;
    }
    this.pending.delete(token);
    return true;
  }

  clear(): void {
    this.pending.clear();
  }
}

/** Whether `code` is the account's code for now, or for the window just before or after (usual clock tolerance). */
export function codeAccepted(secret: string, periodSeconds: number, code: string, now = Date.now()): boolean {
  if (!/^\d{6}$/.test(code)) return false;
  const totp = new TOTP({ secret: Secret.fromBase32(secret), period: periodSeconds, digits: 6, algorithm: 'SHA1' });
  return totp.validate({ token: code, timestamp: now, window: 1 }) !== null;
}

/**
 * A TOTP enrolment secret derived from `text` (a back office derives it from the tenant id, like the password,
 * so tests and configs can name it): the text's UTF-8 bytes in base32 without padding, the form enrolment
 * pages show.
 */
export function totpSecretFrom(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return new Secret({ buffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) }).base32;
}
