import { defineHandler, ItemStateEvent } from '../src/app/handler-kit.js';
import { snapshot, type ItemState } from '../src/app/guarded-write.js';

/** Snapshot: pre-state and the registered way back, before the write. */
export const handler = defineHandler('snapshot', ItemStateEvent, (s, event) => snapshot(s, event as unknown as ItemState));
