import type { SiteAction } from '../../sitepack/schema.js';

/**
 * The vendor's JSON API, where the site pack declares one: the `api` tier of the tool ladder for writes, and an
 * independent readback source. The HTTP adapter implements it (src/adapters/vendor/vendor-api.ts).
 */
export interface VendorApiPort {
  /** Reads one item; undefined when the vendor says it does not exist or is not ours. */
  readItem(billNo: string): Promise<Record<string, unknown> | undefined>;
  /** Sends the action's API request; WriteNotCommittedError when it surely did not land, AmbiguousOutcomeError when it may have. */
  write(action: SiteAction, params: Record<string, string>, idempotencyKey: string): Promise<{ status: number; body: unknown }>;
}
