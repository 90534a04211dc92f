import type { RoutedItem } from '../../domain/routing.js';
import type { ReadbackResult } from '../../domain/readback.js';
import type { NextAfterReadback } from '../../domain/next-after-readback.js';
import type { StoredObject } from '../../adapters/s3/evidence-store.js';

/**
 * What the guarded-write workflow carries between its states, and what each
 * step returns into it. The steps live one per module beside this one.
 */

export interface ClaimRef {
  owner: string;
  version: number;
}

export type ClaimDecision =
  | { decision: 'proceed'; claim: ClaimRef }
  | { decision: 'readback_first'; claim: ClaimRef }
  | { decision: 'skip'; reason: string; status?: string };

export interface SnapshotResult {
  stale: boolean;
  preStatus?: string;
  source: string;
  evidence: StoredObject[];
}

export interface WriteResult {
  tier: string;
  committed: true;
  evidence: StoredObject[];
  dialogs: Array<{ type: string; message: string; accepted: boolean }>;
}

export interface ReadbackOutcome extends ReadbackResult {
  next: NextAfterReadback;
  why: string;
  degraded: boolean;
  evidence: StoredObject[];
}

/** What the workflow carries between states. */
export interface ItemState {
  item: RoutedItem;
  claim?: ClaimDecision;
  snapshot?: SnapshotResult;
  approval?: { approvalId: string; approver: string; decidedAt: string };
  write?: WriteResult;
  writeError?: { Error: string; Cause?: string };
  readback?: ReadbackOutcome;
  takeoverReason?: { Error: string; Cause?: string };
  compensation?: { rolledBack?: boolean; outcome?: string; Error?: string; Cause?: string };
}

/** What an item's execution ends with: the batch counts these. */
export interface ItemOutcome {
  outcome: string;
  key: string;
  billNo?: string;
  reason?: string;
}

export type CloseAs = 'done' | 'rejected' | 'expired';
