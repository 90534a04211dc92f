import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sessionSlotKey, type SessionSlotScope } from '../../domain/session-slots.js';
import type { SessionSlotHold, SessionSlotsPort } from '../../app/ports/session-slots.js';
import { writeIfConditionHolds } from './conditional-write.js';

/**
 * The identity's session slots as records of the claims table (src/domain/session-slots.ts). Every change is one
 * conditional UpdateItem: taking holds only when the slot has no holder or its lease ran out, renewing and
 * releasing only while this holder still has it. No item is ever deleted (a tenant session has no DeleteItem):
 * a released slot keeps its record without a holder. The records have no `status` or `taskId`, so the claims'
 * scans and the task index never see them.
 */
export class SessionSlotsStore implements SessionSlotsPort {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** The clock leases are read against (epoch ms); tests move it to expire a lease. */
    private readonly now: () => number = Date.now,
  ) {}

  async tryTake(
    scope: SessionSlotScope,
    holder: string,
    options: { slots: number; leaseMs: number },
  ): Promise<SessionSlotHold | undefined> {
    for (let slot = 0; slot < options.slots; slot++) {
      const now = this.now();
      const leaseUntil = now + options.leaseMs;
      const taken = await writeIfConditionHolds(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { key: sessionSlotKey(scope, slot) },
            UpdateExpression: 'SET #kind = :kind, #t = :tenant, #i = :identity, #s = :slot, #h = :holder, #u = :until, heldSince = :since',
            ConditionExpression: 'attribute_not_exists(#h) OR #u < :now',
            ExpressionAttributeNames: {
              '#kind': 'kind',
              '#t': 'tenant',
              '#i': 'identity',
              '#s': 'slot',
              '#h': 'holder',
              '#u': 'leaseUntilMs',
            },
            ExpressionAttributeValues: {
              ':kind': 'session-slot',
              ':tenant': scope.tenant,
              ':identity': scope.identity,
              ':slot': slot,
              ':holder': holder,
              ':until': leaseUntil,
              ':since': new Date(now).toISOString(),
              ':now': now,
            },
          }),
        ),
      );
      if (taken) return { scope, slot, holder, leaseUntil };
    }
    return undefined;
  }

  async renew(hold: SessionSlotHold, leaseMs: number): Promise<SessionSlotHold | undefined> {
    const leaseUntil = this.now() + leaseMs;
    const done = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key: sessionSlotKey(hold.scope, hold.slot) },
          UpdateExpression: 'SET #u = :until',
          ConditionExpression: '#h = :holder',
          ExpressionAttributeNames: { '#h': 'holder', '#u': 'leaseUntilMs' },
          ExpressionAttributeValues: { ':holder': hold.holder, ':until': leaseUntil },
        }),
      ),
    );
    return done ? { ...hold, leaseUntil } : undefined;
  }

  async release(hold: SessionSlotHold): Promise<boolean> {
    const done = await writeIfConditionHolds(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { key: sessionSlotKey(hold.scope, hold.slot) },
          UpdateExpression: 'REMOVE #h, heldSince SET #u = :zero',
          ConditionExpression: '#h = :holder',
          ExpressionAttributeNames: { '#h': 'holder', '#u': 'leaseUntilMs' },
          ExpressionAttributeValues: { ':holder': hold.holder, ':zero': 0 },
        }),
      ),
    );
    return done !== undefined;
  }
}
