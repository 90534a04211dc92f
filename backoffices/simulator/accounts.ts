import { totpSecretFrom } from '../kit/second-factor.js';

/**
 * The vendor's accounts. Each tenant has its own service identity scoped to
 * that tenant; the shared ops account (the "super-user" of the incidents) sees
 * every tenant. Credentials follow a fixed pattern so tests and the demo can
 * derive them from the tenant id.
 */

export interface SimAccount {
  username: string;
  password: string;
  /** Bearer token for the JSON API. */
  token: string;
  /** The one tenant this account may see, or null for every tenant. */
  tenant: string | null;
}

/**
 * The TOTP enrolment secret (base32) of a tenant's service account, for a tenant whose spec sets secondFactor.
 * Derived from the tenant id like the password, so tests and configs can name it.
 */
export function totpSecretFor(tenant: string): string {
  return totpSecretFrom(`paperclip-sim-totp-${tenant}`);
}

export const DEFAULT_TENANTS = ['acme', 'globex', 'initech'] as const;

export const OPS_ACCOUNT: SimAccount = Object.freeze({
  username: 'ops-shared',
  password: 'pw-ops-2026',
  token: 'tok-ops',
  tenant: null,
});

export function accountFor(tenant: string): SimAccount {
  return { username: `svc-recon-${tenant}`, password: `pw-${tenant}-2026`, token: `tok-${tenant}`, tenant };
}

/** The accounts of the standalone demo data (tenants acme, globex, initech). */
export const DEFAULT_ACCOUNTS: readonly SimAccount[] = Object.freeze([...DEFAULT_TENANTS.map(accountFor), OPS_ACCOUNT]);

/** The accounts that exist while the simulator holds these tenants. */
export function accountsFor(tenants: readonly string[]): SimAccount[] {
  return [...tenants.map(accountFor), OPS_ACCOUNT];
}

/** An authenticated identity with its resolved scope. */
export interface Identity {
  username: string;
  tenants: readonly string[];
}

export function identityOf(account: SimAccount, allTenants: readonly string[]): Identity {
  return { username: account.username, tenants: account.tenant === null ? allTenants : [account.tenant] };
}

export function canSee(identity: Identity, tenant: string): boolean {
  return identity.tenants.includes(tenant);
}
