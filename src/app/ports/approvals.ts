import { z } from 'zod';

/**
 * The approval requests as the app layer and the approval pages use them. The DynamoDB adapter implements the
 * port (src/adapters/dynamodb/approvals-store.ts); a test fakes it in memory.
 */

export const APPROVAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

const SignIn = z.object({ issuer: z.string(), subject: z.string(), idToken: z.string() });

/** An approval request as stored: what a read is parsed with. Types follow from it. */
export const ApprovalRequest = z.object({
  approvalId: z.string(),
  key: z.string(),
  taskId: z.string(),
  tenant: z.string(),
  billNo: z.string(),
  action: z.string(),
  /** The task's `amount` parameter, when it has one: what the requester asked for. */
  amount: z.string().optional(),
  /**
   * The vendor's own figures (the pack's `approval.show`), read from the vendor with the pre-state, never from the
   * task: shown to the approver beside the task's parameters, labelled as the vendor's.
   */
  vendorFigures: z.record(z.string(), z.string()).optional(),
  /** sha256 of the exact action (key, tenant, bill, action, params) the approver is shown; see approval-proof.ts. */
  payloadHash: z.string().optional(),
  requester: z.string(),
  allowedApprovers: z.array(z.string()),
  /** Only ever read server-side to answer Step Functions; never rendered or mailed. */
  taskToken: z.string(),
  executionArn: z.string(),
  beforeScreenshotKey: z.string().optional(),
  createdAt: z.string(),
  expiresAtIso: z.string(),
  /** Epoch seconds, also the table's TTL attribute. */
  expiresAt: z.number(),
  status: z.enum(APPROVAL_STATUSES),
  decidedBy: z.string().optional(),
  decidedAt: z.string().optional(),
  /** A decision without a note stores null. */
  note: z.string().nullish(),
  /**
   * The approver's sign-in the decision was made under (issuer, subject and the
   * provider's signed ID token), present only when the approval pages checked one.
   */
  signIn: SignIn.optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

export interface ApprovalsPort {
  create(request: ApprovalRequest): Promise<void>;
  get(approvalId: string): Promise<ApprovalRequest | undefined>;
  byKey(key: string): Promise<ApprovalRequest[]>;
  /** One-time decision: succeeds only while the request is still PENDING; undefined otherwise. */
  decide(
    approvalId: string,
    status: 'APPROVED' | 'REJECTED' | 'EXPIRED',
    by: string,
    note?: string,
    signIn?: z.infer<typeof SignIn>,
  ): Promise<ApprovalRequest | undefined>;
}
