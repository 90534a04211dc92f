import {
  BatchGetCommand,
  GetCommand,
  paginateQuery,
  paginateScan,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { itemLockKey, rateLimitFields, type Claim, type ClaimStatus, type ItemLock, type RateLimitCounts } from '../../domain/claim.js';
import { ClaimFencedError } from '../../domain/errors.js';
import { ClaimRecord, ItemLockRecord, type ClaimsPort } from '../../app/ports/claims.js';
import { parseRecord, parseRecords } from './records.js';
import { writeIfConditionHolds } from './conditional-write.js';
import { CLAIMS_BY_TENANT_TASK_INDEX } from '../../contracts/table-definitions.js';

/** The idempotency registry in DynamoDB: a conditional put takes a claim, conditional updates move it. */
export class ClaimsStore implements ClaimsPort {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** True if this call created the claim; false if the key was already claimed. */
  async tryCreate(claim: Claim): Promise<boolean> {
    const created = await writeIfConditionHolds(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: claim,
          ConditionExpression: 'attribute_not_exists(#k)',
          ExpressionAttributeNames: { '#k': 'key' },
        }),
      ),
    );
    return created !== undefined;
  }

  /** Every claim still CLAIMED or WRITING, read consistently (a scan: for recovering orphans, never on a write path). */
  async unsettled(): Promise<Claim[]> {
    return this.scan({
      FilterExpression: '#s IN (:c, :w)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':c': 'CLAIMED', ':w': 'WRITING' },
      ConsistentRead: true,
    });
  }

  /** Every write's claim updated since `since`, of one tenant when given (a scan: for reports). */
  async updatedSince(filter: { since?: Date; tenant?: string }): Promise<Claim[]> {
    // Items' open-write records share the key prefix; they have no status.
    const filters = ['begins_with(#k, :k)', 'attribute_exists(#s)'];
    const values: Record<string, unknown> = { ':k': 'k-' };
    const names: Record<string, string> = { '#k': 'key', '#s': 'status' };
    if (filter.since) {
      filters.push('#u >= :since');
      names['#u'] = 'updatedAt';
      values[':since'] = filter.since.toISOString();
    }
    if (filter.tenant) {
      filters.push('#t = :tenant');
      names['#t'] = 'tenant';
      values[':tenant'] = filter.tenant;
    }
    return this.scan({ FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names, ExpressionAttributeValues: values });
  }

  private async scan(input: Omit<ScanCommandInput, 'TableName'>): Promise<Claim[]> {
    const claims: Claim[] = [];
    for await (const page of paginateScan({ client: this.db }, { TableName: this.table, ...input })) {
      claims.push(...parseRecords(ClaimRecord, page.Items, this.table));
    }
    return claims;
  }

  async get(key: string): Promise<Claim | undefined> {
    const result = await this.db.send(new GetCommand({ TableName: this.table, Key: { key }, ConsistentRead: true }));
    return result.Item && parseRecord(ClaimRecord, result.Item, this.table);
  }

  /** The claims that exist among `keys` (eventually consistent: for reporting, never for deciding a write). */
  async existing(keys: readonly string[]): Promise<Claim[]> {
    const found: Claim[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let request: Record<string, { Keys: Array<Record<string, unknown>> }> | undefined = {
        [this.table]: { Keys: keys.slice(i, i + 100).map((key) => ({ key })) },
      };
      while (request && Object.keys(request).length > 0) {
        const result = await this.db.send(new BatchGetCommand({ RequestItems: request }));
        found.push(...parseRecords(ClaimRecord, result.Responses?.[this.table], this.table));
        request = result.UnprocessedKeys as typeof request;
      }
    }
    return found;
  }

  /**
   * The claims of a task: of one tenant through the tenant-keyed index (the tenant is the index's partition key, so
   * a tenant session's LeadingKeys condition confines it), or of every tenant by a scan (operator tools only).
   */
  async byTask(taskId: string, tenant?: string): Promise<Claim[]> {
    if (tenant === undefined) {
      return this.scan({
        FilterExpression: '#t = :t',
        ExpressionAttributeNames: { '#t': 'taskId' },
        ExpressionAttributeValues: { ':t': taskId },
      });
    }
    const claims: Claim[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: CLAIMS_BY_TENANT_TASK_INDEX,
        KeyConditionExpression: '#tenant = :tenant AND taskId = :t',
        ExpressionAttributeNames: { '#tenant': 'tenant' },
        ExpressionAttributeValues: { ':tenant': tenant, ':t': taskId },
      },
    );
    for await (const page of pages) claims.push(...parseRecords(ClaimRecord, page.Items, this.table));
    return claims;
  }

  async addRateLimits(key: string, counts: RateLimitCounts): Promise<void> {
    const fields = Object.entries(rateLimitFields(counts));
    if (fields.length === 0) return;
    await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key },
          UpdateExpression: `ADD ${fields.map((_, i) => `#f${i} :v${i}`).join(', ')}`,
          // Never creates a record: a key nobody claimed has no write to count against (only claims have a status).
          ConditionExpression: 'attribute_exists(#st)',
          ExpressionAttributeNames: { ...Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])), '#st': 'status' },
          ExpressionAttributeValues: Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])),
        }),
      ),
    );
  }

  /**
   * Moves a claim held by `owner` at `version` from one of `from` to `to`,
   * setting extra attributes. Fails with ClaimFencedError if anyone else moved it.
   */
  async transition(
    key: string,
    guard: { owner: string; version: number; from: readonly ClaimStatus[] },
    to: ClaimStatus,
    set: Partial<Omit<Claim, 'key' | 'owner' | 'version' | 'status'>> = {},
  ): Promise<Claim> {
    const names: Record<string, string> = { '#s': 'status', '#o': 'owner', '#v': 'version', '#u': 'updatedAt' };
    const values: Record<string, unknown> = {
      ':to': to,
      ':owner': guard.owner,
      ':version': guard.version,
      ':now': new Date().toISOString(),
    };
    const assignments = ['#s = :to', '#u = :now'];
    Object.entries(set).forEach(([field, value], i) => {
      if (value === undefined) return;
      names[`#f${i}`] = field;
      values[`:f${i}`] = value;
      assignments.push(`#f${i} = :f${i}`);
    });
    const fromList = guard.from.map((status, i) => {
      values[`:from${i}`] = status;
      return `:from${i}`;
    });
    const result = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key },
          UpdateExpression: `SET ${assignments.join(', ')}`,
          ConditionExpression: `#o = :owner AND #v = :version AND #s IN (${fromList.join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (!result) {
      throw new ClaimFencedError(`claim ${key} is no longer held by this run in ${guard.from.join('/')} at version ${guard.version}`, {
        key,
        owner: guard.owner,
        version: guard.version,
      });
    }
    return parseRecord(ClaimRecord, result.Attributes, this.table);
  }

  /** Takes over an abandoned claim: new owner, fencing version + 1, fresh lease. */
  async takeOver(previous: Claim, newOwner: string, leaseUntil: string): Promise<Claim | undefined> {
    const result = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key: previous.key },
          UpdateExpression: 'SET #o = :new, #v = :next, leaseUntil = :lease, updatedAt = :now',
          ConditionExpression: '#o = :old AND #v = :version AND #s = :status',
          ExpressionAttributeNames: { '#o': 'owner', '#v': 'version', '#s': 'status' },
          ExpressionAttributeValues: {
            ':new': newOwner,
            ':old': previous.owner,
            ':next': previous.version + 1,
            ':version': previous.version,
            ':status': previous.status,
            ':lease': leaseUntil,
            ':now': new Date().toISOString(),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result ? parseRecord(ClaimRecord, result.Attributes, this.table) : undefined;
  }

  async itemLock(tenant: string, billNo: string): Promise<ItemLock | undefined> {
    const key = itemLockKey(tenant, billNo);
    const result = await this.db.send(new GetCommand({ TableName: this.table, Key: { key }, ConsistentRead: true }));
    return result.Item && parseRecord(ItemLockRecord, result.Item, this.table);
  }

  async holdItem(
    lock: { tenant: string; billNo: string; holder: string; holderTask: string; holderAction: string },
    expectedHolder?: string,
  ): Promise<boolean> {
    // An update, not a put: it creates the record the first time and compares the holder after that, in one condition.
    const values: Record<string, unknown> = {
      ':kind': 'open-item',
      ':tenant': lock.tenant,
      ':bill': lock.billNo,
      ':holder': lock.holder,
      ':task': lock.holderTask,
      ':action': lock.holderAction,
      ':now': new Date().toISOString(),
    };
    if (expectedHolder !== undefined) values[':expected'] = expectedHolder;
    const done = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key: itemLockKey(lock.tenant, lock.billNo) },
          UpdateExpression:
            'SET #kind = :kind, #t = :tenant, #b = :bill, #h = :holder, holderTask = :task, holderAction = :action, heldSince = :now',
          ConditionExpression: expectedHolder === undefined ? 'attribute_not_exists(#h)' : '#h = :expected',
          ExpressionAttributeNames: { '#kind': 'kind', '#t': 'tenant', '#b': 'billNo', '#h': 'holder' },
          ExpressionAttributeValues: values,
        }),
      ),
    );
    return done !== undefined;
  }

  async releaseItem(tenant: string, billNo: string, holder: string): Promise<boolean> {
    const done = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key: itemLockKey(tenant, billNo) },
          UpdateExpression: 'REMOVE #h, holderTask, holderAction, heldSince',
          ConditionExpression: '#h = :holder',
          ExpressionAttributeNames: { '#h': 'holder' },
          ExpressionAttributeValues: { ':holder': holder },
        }),
      ),
    );
    return done !== undefined;
  }
}
