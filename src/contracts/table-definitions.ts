/**
 * Key schemas of every DynamoDB table, in one place: the CDK app builds the
 * tables from these, and the local stack creates the same tables in dynalite.
 */
export interface TableDefinition {
  /** Logical id; the physical name is `${prefix}-${id}`. */
  id: 'claims' | 'approvals' | 'takeover' | 'audit' | 'planner-tasks';
  partitionKey: { name: string; type: 'S' | 'N' };
  sortKey?: { name: string; type: 'S' | 'N' };
  /** Epoch-seconds attribute DynamoDB may expire; never set on an unresolved claim. */
  ttlAttribute?: string;
  indexes: Array<{
    name: string;
    partitionKey: { name: string; type: 'S' | 'N' };
    sortKey?: { name: string; type: 'S' | 'N' };
  }>;
}

export const TABLES: readonly TableDefinition[] = [
  {
    id: 'claims',
    partitionKey: { name: 'key', type: 'S' },
    ttlAttribute: 'expiresAt',
    indexes: [{ name: 'byTask', partitionKey: { name: 'taskId', type: 'S' }, sortKey: { name: 'key', type: 'S' } }],
  },
  {
    id: 'approvals',
    partitionKey: { name: 'approvalId', type: 'S' },
    ttlAttribute: 'expiresAt',
    indexes: [{ name: 'byKey', partitionKey: { name: 'key', type: 'S' } }],
  },
  {
    id: 'takeover',
    partitionKey: { name: 'key', type: 'S' },
    indexes: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } }],
  },
  {
    id: 'audit',
    partitionKey: { name: 'chain', type: 'S' },
    sortKey: { name: 'seq', type: 'N' },
    indexes: [],
  },
  {
    id: 'planner-tasks',
    partitionKey: { name: 'taskId', type: 'S' },
    indexes: [],
  },
];

export function tableName(prefix: string, id: TableDefinition['id']): string {
  return `${prefix}-${id}`;
}
