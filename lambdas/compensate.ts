import '../src/composition/lambda.js';
import { defineTenantHandler, recordScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import {
  inverseRunFromWorkflow,
  prepareCompensation,
  recordCompensation,
  type CompensationResult,
  type PreparedCompensation,
} from '../src/app/compensation.js';

/**
 * Compensate and RecordCompensation: opens a compensation and hands the workflow the inverse to run
 * as a nested guarded-write execution, then closes it with how that execution ended. The workflow
 * waits for the inverse (`.sync:2`); this function never does, and opens no browser.
 */
export const handler = defineTenantHandler(
  'compensate',
  StepInput.Compensate,
  // The item being undone: its audit trail and claim, under its tenant's session.
  (event) => recordScope(event.item),
  (s, event): Promise<PreparedCompensation | CompensationResult> =>
    event.phase === 'prepare'
      ? prepareCompensation(s, {
          key: event.item.key,
          requestedBy: 'compensation',
          reason: 'readback showed an unintended state',
          executionArn: event.executionArn,
        })
      : recordCompensation(s, event.prepared, inverseRunFromWorkflow(event.run)),
);
