import type { Services } from './services.js';
import { assertBillBelongsToTenant, type RoutedItem } from '../domain/routing.js';
import { readContextFor, readOwnership } from '../browser/vendor-reads.js';
import { withSession } from './sessions.js';

/**
 * Proves, before any write session opens, that the item belongs to the task's
 * tenant, the way the site pack says: the API's owner field (no browser when it
 * takes a token or signs in by api.login), a tenant-filtered search of the list,
 * a detail-page field or the export's owner column (a read-only session of the
 * tenant's identity). A pack without `ownership` relies on the identity's own
 * scope at the vendor.
 */
export async function proveOwnership(s: Services, item: RoutedItem): Promise<ApiObservation | undefined> {
  const ownership = s.pack.ownership;
  if (!ownership) return undefined;
  const ctx = { ...readContextFor(s, item.tenant), billNo: item.billNo };
  const api = ownership.source === 'api' ? await browserlessApi(s, item.identity) : undefined;
  const found = api
    ? await readOwnership({ ...ctx, api })
    : await withSession(s, item.identity, 'read', { trace: false, tenant: item.tenant }, (session) => readOwnership({ ...ctx, session }));
  assertBillBelongsToTenant(item, found);
  return api && found.status !== undefined ? { source: 'api', status: found.status, at: found.at } : undefined;
}

/** The item's status as the vendor API answered the ownership read: Snapshot's pre-state source for a browser write. */
export interface ApiObservation {
  source: 'api';
  status: string;
  at: string;
}

/**
 * The identity's client for the pack's API when it needs no browser: a token
 * API, or a cookie API that signs in by api.login. A cookie API without a login
 * request is read through a browser session instead (undefined here).
 */
export async function browserlessApi(s: Services, identity: string) {
  const api = s.pack.api;
  return api && (api.auth === 'token' || api.login) ? s.vendorApi(identity) : undefined;
}
