import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { compensate } from '../src/app/compensation.js';

/** Compensate: runs the registered inverse through the guarded path and reports whether it was verified. */
export const handler = defineHandler('compensate', StepInput.Compensate, (s, event) =>
  compensate(s, {
    key: event.item.key,
    requestedBy: 'compensation',
    reason: 'readback showed an unintended state',
    executionArn: event.executionArn,
  }),
);
