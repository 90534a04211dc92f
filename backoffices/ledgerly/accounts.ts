/**
 * Ledgerly's users. Each org has its own billing admin who belongs to that org
 * only; the ops user belongs to every org and switches between them with the
 * organization selector. Credentials follow a fixed pattern so tests and runs
 * can derive them from the org slug.
 */

export interface LedgerlyUser {
  /** Signs in with this email; journal entries name it as the identity. */
  username: string;
  password: string;
  displayName: string;
  /** The orgs this user belongs to, or null for every org. */
  org: string | null;
}

export const DEFAULT_ORGS = ['acme', 'globex'] as const;

export const LEDGERLY_OPS_USER: LedgerlyUser = Object.freeze({
  username: 'ops@ledgerly.test',
  password: 'Ops-2026!',
  displayName: 'Operations',
  org: null,
});

export function ledgerlyUserFor(org: string): LedgerlyUser {
  return { username: `billing@${org}.test`, password: `Ledgerly-${org}-2026`, displayName: `${capitalise(org)} Billing`, org };
}

export function ledgerlyUsersFor(orgs: readonly string[]): LedgerlyUser[] {
  return [...orgs.map(ledgerlyUserFor), LEDGERLY_OPS_USER];
}

export function orgsOf(user: LedgerlyUser, allOrgs: readonly string[]): string[] {
  return user.org === null ? [...allOrgs] : [user.org];
}

export function capitalise(slug: string): string {
  return slug.charAt(0).toUpperCase() + slug.slice(1);
}
