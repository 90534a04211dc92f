import { defineHandler, ItemStateEvent } from '../src/app/handler-kit.js';
import { snapshot } from '../src/app/guarded-write/snapshot.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** Snapshot: pre-state and the registered way back, before the write. */
export const handler = defineHandler('snapshot', ItemStateEvent, (s, event) => snapshot(s, event as unknown as ItemState));
