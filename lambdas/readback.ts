import { defineHandler, ItemStateEvent } from '../src/app/handler-kit.js';
import { readback } from '../src/app/guarded-write/readback.js';
import type { ItemState } from '../src/app/guarded-write/state.js';

/** Readback: an independent source, a fresh session, polled until settled. */
export const handler = defineHandler('readback', ItemStateEvent, (s, event) => readback(s, event as unknown as ItemState));
