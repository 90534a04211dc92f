import type { Services } from '../services.js';
import type { RoutedItem } from '../../domain/routing.js';
import { evidenceKey, type StoredObject } from '../ports/evidence.js';
import { evidenceScreenshot } from '../../browser/evidence-screenshot.js';
import type { OpenedSession } from '../../browser/identity-sessions.js';
import { openDetail as openDetailPage, readContextFor } from '../../browser/vendor-reads.js';
import type { ClaimRef, ItemState } from './state.js';

/** The page a session drives; the browser layer does the driving. */
type Page = OpenedSession['page'];

/**
 * What several guarded-write steps share: the claim they hold, its lease, and
 * how they find and picture the item on the vendor's pages.
 */

/** A claim's lease: the step's budget, plus the approval wait for an item that needs one. */
export function lease(s: Services, item: RoutedItem): string {
  const seconds = s.config.write_policy.claim_lease_seconds + (item.needsApproval ? s.config.write_policy.approval_timeout_seconds : 0);
  return new Date(Date.now() + seconds * 1000).toISOString();
}

/** The claim this run holds; the workflow only reaches a step that needs one after Claim granted it. */
export function heldClaim(state: ItemState): ClaimRef {
  const claim = state.claim;
  // A blocked claim holds nothing either: it moved to BLOCKED before any write.
  if (!claim || claim.decision === 'skip' || claim.decision === 'blocked') throw new Error('this step needs a held claim');
  return claim.claim;
}

export const itemRow = (s: Services, item: RoutedItem) => ({ list: s.pack.list, key: item.billNo });

/** Pictures the page as evidence; `placeRow: false` where the caller has just placed the row (or the page has none). */
export async function screenshotTo(
  s: Services,
  item: RoutedItem,
  page: Page,
  name: string,
  { placeRow = true }: { placeRow?: boolean } = {},
): Promise<StoredObject> {
  return s.evidence.put(evidenceKey(item, name), await evidenceScreenshot(page, placeRow ? itemRow(s, item) : undefined), 'image/png');
}

export async function openDetail(s: Services, item: RoutedItem, session: OpenedSession): Promise<void> {
  if (!s.pack.detail) return;
  await openDetailPage(session, { ...readContextFor(s, item.tenant), billNo: item.billNo });
}
