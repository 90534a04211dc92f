import '../src/composition/lambda.js';
import { defineTenantHandler, recordScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { complete } from '../src/app/guarded-write/complete.js';

/** Complete: done after a confirmed readback, or stale / rejected / expired before anything ran, under the item's tenant session. */
export const handler = defineTenantHandler('complete', StepInput.Complete, (event) => recordScope(event.state.item), complete);
