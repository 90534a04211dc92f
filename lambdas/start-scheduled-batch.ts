import { defineHandler } from '../src/app/handler-kit.js';
import { batchStateMachineArn, ScheduledStart, startScheduledBatch } from '../src/app/scheduled-batch.js';

/**
 * StartScheduledBatch: the target of each tenant's EventBridge schedule. Starts the tenant's batch with the
 * schedule as its requester, attested like every other entry point's (src/app/scheduled-batch.ts).
 */
export const handler = defineHandler('start-scheduled-batch', ScheduledStart, (s, event) =>
  startScheduledBatch(s, event, batchStateMachineArn()),
);
