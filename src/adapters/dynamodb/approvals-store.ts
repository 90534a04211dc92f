import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ApprovalRequest, type ApprovalsPort } from '../../app/ports/approvals.js';
import { parseRecord, parseRecords } from './records.js';
import { writeIfConditionHolds } from './conditional-write.js';

/** The approval requests in DynamoDB; a decision is a conditional update, so a request is decided once. */
export class ApprovalsStore implements ApprovalsPort {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(request: ApprovalRequest): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: request, ConditionExpression: 'attribute_not_exists(approvalId)' }));
  }

  async get(approvalId: string): Promise<ApprovalRequest | undefined> {
    const result = await this.db.send(new GetCommand({ TableName: this.table, Key: { approvalId }, ConsistentRead: true }));
    return result.Item && parseRecord(ApprovalRequest, result.Item, this.table);
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
    return parseRecords(ApprovalRequest, result.Items, this.table);
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
    return result ? parseRecord(ApprovalRequest, result.Attributes, this.table) : undefined;
  }
}
