import type { Services } from './services.js';
import { assertBillBelongsToTenant, type RoutedItem } from '../domain/routing.js';
import { readContextFor, readOwnership } from './vendor-reads.js';
import { withSession } from './sessions.js';

/**
 * Proves, before any write session opens, that the item belongs to the task's
 * tenant, the way the site pack says: the API's owner field (no browser when it
 * takes a token), a tenant-filtered search of the list, a detail-page field or
 * the export's owner column (a read-only session of the tenant's identity).
 * A pack without `ownership` relies on the identity's own scope at the vendor.
 */
export async function proveOwnership(s: Services, item: RoutedItem): Promise<void> {
  const ownership = s.pack.ownership;
  if (!ownership) return;
  const ctx = { ...readContextFor(s, item.tenant), billNo: item.billNo };
  const byToken = ownership.source === 'api' && s.pack.api?.auth === 'token';
  const found = byToken
    ? await readOwnership({ ...ctx, api: await s.vendorApi(item.identity) })
    : await withSession(s, item.identity, 'read', { trace: false }, (session) => readOwnership({ ...ctx, session }));
  assertBillBelongsToTenant(item, found);
}

/** The token client of an identity when the pack's API takes a token; cookie APIs read through a session. */
export async function tokenApi(s: Services, identity: string) {
  return s.pack.api?.auth === 'token' ? s.vendorApi(identity) : undefined;
}
