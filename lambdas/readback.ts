import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { readback } from '../src/app/guarded-write/readback.js';

/** Readback: an independent source, a fresh session, polled until settled. */
export const handler = defineHandler('readback', StepInput.Readback, readback);
