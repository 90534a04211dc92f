import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { writeIfConditionHolds } from './conditional-write.js';

export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';

export interface ApprovalRequest {
  approvalId: string;
  key: string;
  taskId: string;
  tenant: string;
  billNo: string;
  action: string;
  amount?: string;
  /** sha256 of the exact action (key, tenant, bill, action, params) the approver is shown; see approval-proof.ts. */
  payloadHash?: string;
  requester: string;
  allowedApprovers: string[];
  /** Only ever read server-side to answer Step Functions; never rendered or mailed. */
  taskToken: string;
  executionArn: string;
  beforeScreenshotKey?: string;
  createdAt: string;
  expiresAtIso: string;
  /** Epoch seconds, also the table's TTL attribute. */
  expiresAt: number;
  status: ApprovalStatus;
  decidedBy?: string;
  decidedAt?: string;
  note?: string;
  /**
   * The approver's sign-in the decision was made under (issuer, subject and the
   * provider's signed ID token), present only when the approval pages checked one.
   */
  signIn?: { issuer: string; subject: string; idToken: string };
}

export class ApprovalsStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(request: ApprovalRequest): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: request, ConditionExpression: 'attribute_not_exists(approvalId)' }));
  }

  async get(approvalId: string): Promise<ApprovalRequest | undefined> {
    const result = await this.db.send(new GetCommand({ TableName: this.table, Key: { approvalId }, ConsistentRead: true }));
    return result.Item as ApprovalRequest | undefined;
  }

  async byKey(key: string): Promise<ApprovalRequest[]> {
    const result = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'byKey',
        KeyConditionExpression: '#k = :k',
        ExpressionAttributeNames: { '#k': 'key' },
        ExpressionAttributeValues: { ':k': key },
      }),
    );
    return (result.Items ?? []) as ApprovalRequest[];
  }

  /** One-time decision: succeeds only while the request is still PENDING. */
  async decide(
    approvalId: string,
    status: 'APPROVED' | 'REJECTED' | 'EXPIRED',
    by: string,
    note?: string,
    signIn?: { issuer: string; subject: string; idToken: string },
  ): Promise<ApprovalRequest | undefined> {
    const result = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { approvalId },
          UpdateExpression: `SET #s = :s, decidedBy = :by, decidedAt = :at, note = :note${signIn ? ', signIn = :signIn' : ''}`,
          ConditionExpression: '#s = :pending',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':s': status,
            ':by': by,
            ':at': new Date().toISOString(),
            ':note': note ?? null,
            ':pending': 'PENDING',
            ...(signIn ? { ':signIn': { issuer: signIn.issuer, subject: signIn.subject, idToken: signIn.idToken } } : {}),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes as ApprovalRequest | undefined;
  }
}
