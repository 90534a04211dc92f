import { z } from 'zod';
import { defineHandler, ExecutionArn, ItemStateEvent } from '../src/app/handler-kit.js';
import { takeover } from '../src/app/guarded-write/takeover.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** Takeover: the machine refuses to decide; a person gets the item with its evidence. */
export const handler = defineHandler('takeover', z.object({ state: ItemStateEvent, executionArn: ExecutionArn }), (s, event) =>
  takeover(s, { ...event, state: event.state as unknown as ItemState }),
);
