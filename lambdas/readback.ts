import '../src/composition/lambda.js';
import { defineTenantHandler, itemScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { readback } from '../src/app/guarded-write/readback.js';

/** Readback: an independent source, a fresh session, polled until settled, under the item's tenant session. */
export const handler = defineTenantHandler('readback', StepInput.Readback, (event) => itemScope(event.item), readback);
