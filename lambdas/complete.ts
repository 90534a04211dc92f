import { z } from 'zod';
import { defineHandler, ExecutionArn, ItemStateEvent } from '../src/app/handler-kit.js';
import { complete } from '../src/app/guarded-write/complete.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** Complete: done after a confirmed readback, or rejected / expired before anything ran. */
export const handler = defineHandler(
  'complete',
  z.object({
    state: ItemStateEvent,
    executionArn: ExecutionArn,
    closeAs: z.enum(['done', 'rejected', 'expired']),
    reason: z.string().optional(),
  }),
  (s, event) => complete(s, { ...event, state: event.state as unknown as ItemState }),
);
