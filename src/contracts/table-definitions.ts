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

/** The claims of one tenant's task: partition key the tenant, sort key the task id. */
export const CLAIMS_BY_TENANT_TASK_INDEX = 'byTenantTask';

export const TABLES: readonly TableDefinition[] = [
  {
    id: 'claims',
    partitionKey: { name: 'key', type: 'S' },
    ttlAttribute: 'expiresAt',
    // Keyed by the tenant, so a tenant session's dynamodb:LeadingKeys confines a query of a task's claims to its tenant.
    indexes: [{ name: CLAIMS_BY_TENANT_TASK_INDEX, partitionKey: { name: 'tenant', type: 'S' }, sortKey: { name: 'taskId', type: 'S' } }],
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
