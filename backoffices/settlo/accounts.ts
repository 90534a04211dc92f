import { totpSecretFrom } from '../kit/second-factor.js';

/**
 * Settlo's users: one settlement clerk per tenant, scoped to that tenant. Every user must type a TOTP code
 * after the password (the portal enforces it). Passwords and enrolment secrets follow a fixed pattern so
 * tests and configs can derive them from the tenant id; they are test fixtures, not secrets.
 */

export interface SettloUser {
  username: string;
  password: string;
  tenant: string;
  /** Base32 TOTP enrolment secret (what the portal's enrolment page would show under its QR code). */
  totpSecret: string;
}

export const DEFAULT_TENANTS = ['acme', 'globex'] as const;

/** TOTP codes: 30-second windows, 6 digits, SHA1 (what authenticator apps default to). */
export const TOTP_PERIOD_SECONDS = 30;

export function settloUserFor(tenant: string): SettloUser {
  return { username: `js-${tenant}`, password: `Settlo-${tenant}-2026`, tenant, totpSecret: settloTotpSecretFor(tenant) };
}

export function settloUsersFor(tenants: readonly string[]): SettloUser[] {
  return tenants.map(settloUserFor);
}

export function settloTotpSecretFor(tenant: string): string {
  return totpSecretFrom(`settlo-totp-${tenant}`);
}
