import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { snapshot } from '../src/app/guarded-write/snapshot.js';

/** Snapshot: pre-state and the registered way back, before the write. */
export const handler = defineHandler('snapshot', StepInput.Snapshot, snapshot);
