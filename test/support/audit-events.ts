import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { GENESIS_HASH, sealEvent, type AuditEvent, type AuditEventBody } from '../../src/domain/audit-chain.js';
import type { AuditEventData, AuditEventInput, AuditEventType } from '../../src/domain/audit-events.js';
import type { WiredServices } from '../../src/composition/services.js';

const HASH = 'a'.repeat(64);
const ARN = 'arn:aws:states:us-east-1:000000000000:execution:paperclip-local-guarded-write:x';
const decided = {
  approvalId: 'ap-1',
  approver: 'boss@acme.example',
  decidedAt: '2026-12-01T08:00:00.000Z',
  requester: 'ops@acme.example',
  action: 'refund',
  billNo: 'ACME-202611-0001',
  amount: '12.00',
  note: null,
  executionArn: ARN,
  signIn: null,
};
const closed = {
  inverseKey: 'k-acme_inverse',
  outcome: 'done',
  reason: null,
  executionArn: ARN,
  preStatus: 'PENDING',
  restoredStatus: 'PENDING',
};

/**
 * One valid data of every event type, as its writer appends it. Typed by the union, so a type added to
 * src/domain/audit-events.ts without a sample here fails tsc.
 */
export const SAMPLE_DATA: { [T in AuditEventType]: AuditEventData<T> } = {
  routed: { identity: 'svc-recon-acme', tenant: 'acme', taskId: 'T-unit', executionArn: ARN, item: { tier: 'browser' } },
  routing_failed: {
    reason: 'the vendor ended the session',
    error: 'SessionLostError',
    taskId: 'T-unit',
    executionArn: ARN,
    nothingWritten: true,
  },
  claimed: { owner: ARN, version: 1 },
  claim_taken_over: { from: 'arn:old', owner: ARN, version: 2, status: 'CLAIMED' },
  blocked: { openKey: 'k-acme_open', openStatus: 'TAKEOVER', reason: 'blocked: acme ACME-1 has an unresolved write k-acme_open' },
  stale: { preStatus: 'PROCESSED', expected: ['PENDING'] },
  pre_state_registered: { preStatus: 'PENDING', source: 'list', inverse: null, reversibility: 'reversible', evidence: [] },
  approval_requested: { approvalId: 'ap-1', approvers: ['boss@acme.example'], expiresAt: '2026-12-02T08:00:00.000Z', payloadHash: HASH },
  approved: decided,
  rejected: decided,
  approval_expired: { approvalId: 'ap-1', expiresAt: '2026-12-02T08:00:00.000Z' },
  approval_not_delivered: { approvalId: 'ap-1', decision: 'approve', error: 'TaskTimedOut: gone' },
  approval_not_proven: { reason: 'no approval', claimedByWorkflow: null },
  write_started: { tier: 'browser', stage: 'write', step: 3 },
  write_step: { tier: 'browser', stage: 'write', step: 2 },
  stage_already_done: { stage: 'write' },
  stage_done_checked: {
    stage: 'reason_saved',
    line: 'actions.resolve.tiers.browser.stages[0].done',
    when: 'after_commit',
    matched: true,
    earlier: null,
    decision: 'proceed',
  },
  undo_window_waited: { stage: 'write', undoWindowSeconds: 5, waitedMs: 5800 },
  commit_requests_unanswered: { stage: 'write', waitedMs: 10000, requests: ['POST /api/bills/N-1/resolve'] },
  session_slot_lost: { slot: 0, leaseUntil: '2026-12-01T08:00:00.000Z', foundAt: '2026-12-01T08:00:05.000Z', afterCommitClick: true },
  after_pictured: { settled: true, url: 'http://127.0.0.1/bills' },
  write_failed: { committed: false, error: 'WriteNotCommittedError', message: 'no button', evidence: [] },
  readback: {
    verdict: 'confirmed',
    observed: 'PROCESSED',
    seen: ['PROCESSED'],
    source: 'list',
    next: 'complete',
    why: 'the target status',
    degraded: false,
    evidence: [],
  },
  completed: { verdict: 'confirmed', reason: null },
  expired: { verdict: null, reason: 'approval timed out' },
  takeover: { reason: 'ambiguous', error: null, round: 1, stage: 'readback', evidence: [] },
  takeover_not_taken: { reason: 'ambiguous', error: null, claimStatus: 'CLAIMED', claimOwner: 'arn:other', executionArn: ARN },
  takeover_resolved: {
    as: 'done',
    round: 1,
    claimStatus: 'DONE',
    previousOwner: ARN,
    previousVersion: 2,
    version: 3,
  },
  takeover_retry_failed: { error: 'no such execution', retryExecutionArn: ARN },
  takeover_retry_finished: { outcome: 'done', reason: null, retryExecutionArn: ARN },
  orphan_resumed: { deadOwner: 'arn:old', ownerStatus: 'FAILED', claimStatus: 'CLAIMED', version: 2, execution: 'x-r2' },
  compensation_started: {
    inverse: 'unmark_processed',
    reason: 'wrong bill',
    inverseKey: 'k-acme_inverse',
    preStatus: 'PENDING',
    requestedBy: 'ops@acme.example',
    attestation: 'A'.repeat(43),
  },
  compensated: closed,
  compensation_failed: { ...closed, outcome: 'error', restoredStatus: null },
  sealed: { sealHash: HASH, seal: 'evidence/acme/T-unit/seal.json', items: 1, objects: 3 },
  item_sealed: { basedOn: HASH, items: [], batchObjects: [] },
};

/** A valid event of this type, its data the sample with `data` over it. */
export function sampleEvent<T extends AuditEventType>(
  type: T,
  data: Partial<AuditEventData<T>> = {},
  actor = 'svc-recon-acme',
): Extract<AuditEventInput, { type: T }> {
  return { type, actor, data: { ...SAMPLE_DATA[type], ...data } } as Extract<AuditEventInput, { type: T }>;
}

/**
 * What anyone with write access to the audit table can do, and the audit log refuses: append a correctly chained
 * event of any shape (a forged or malformed one, or one of an older shape). For tests of what readers and verify
 * make of such events.
 */
export async function appendUnchecked(
  s: Pick<WiredServices, 'audit' | 'clients' | 'table'>,
  chain: string,
  body: AuditEventBody,
): Promise<AuditEvent> {
  const head = await s.audit.head(chain);
  const event = sealEvent(chain, (head?.seq ?? 0) + 1, head?.hash ?? GENESIS_HASH, body);
  await s.clients.db.send(new PutCommand({ TableName: s.table('audit'), Item: event, ConditionExpression: 'attribute_not_exists(seq)' }));
  return event;
}
