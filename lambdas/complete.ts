import '../src/composition/lambda.js';
import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { complete } from '../src/app/guarded-write/complete.js';

/** Complete: done after a confirmed readback, or stale / rejected / expired before anything ran. */
export const handler = defineHandler('complete', StepInput.Complete, complete);
