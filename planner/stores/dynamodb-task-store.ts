import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { writeIfConditionHolds } from '../../src/adapters/dynamodb/conditional-write.js';
import { DynamoDBDocumentClient, GetCommand, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../src/contracts/table-definitions.js';
import { parseOrThrow } from '../../src/config/errors.js';
import { TaskExistsError, TaskId, TaskRecord, TaskVersionConflictError, type TaskStatus, type TaskStore } from '../task-state.js';

/**
 * Tasks in the `planner-tasks` table: one item per task, every write a
 * conditional put on the version it read, so two runners resuming the same
 * task cannot both advance it (the loser gets TaskVersionConflictError and
 * stops). Items stay small because the history is stored compressed.
 */
export class DynamoDbTaskStore implements TaskStore {
  private readonly doc: DynamoDBDocumentClient;
  readonly table: string;

  constructor(client: DynamoDBClient, prefix: string) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = tableName(prefix, 'planner-tasks');
  }

  async create(record: TaskRecord): Promise<void> {
    const item = parseOrThrow(TaskRecord, record, `task ${record.taskId}`);
    const created = await writeIfConditionHolds(() =>
      this.doc.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(taskId)' })),
    );
    if (!created) throw new TaskExistsError(record.taskId);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { taskId: parseOrThrow(TaskId, taskId, 'taskId') }, ConsistentRead: true }),
    );
    return Item ? parseOrThrow(TaskRecord, Item, `${this.table}/${taskId}`) : undefined;
  }

  async update(record: TaskRecord, expectedVersion: number): Promise<TaskRecord> {
    const next = parseOrThrow(TaskRecord, { ...record, version: expectedVersion + 1 }, `task ${record.taskId}`);
    const updated = await writeIfConditionHolds(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: next,
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      ),
    );
    if (!updated) throw new TaskVersionConflictError(record.taskId, expectedVersion);
    return next;
  }

  async list(filter: { status?: TaskStatus } = {}): Promise<TaskRecord[]> {
    const records: TaskRecord[] = [];
    const pages = paginateScan(
      { client: this.doc },
      {
        TableName: this.table,
        ConsistentRead: true,
        ...(filter.status
          ? {
              FilterExpression: '#status = :status',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':status': filter.status },
            }
          : {}),
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) records.push(parseOrThrow(TaskRecord, item, `${this.table}/${String(item['taskId'])}`));
    }
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}
