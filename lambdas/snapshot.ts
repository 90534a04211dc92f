import '../src/composition/lambda.js';
import { defineTenantHandler, itemScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { snapshot } from '../src/app/guarded-write/snapshot.js';

/** Snapshot: pre-state and the registered way back, before the write, under the item's tenant session. */
export const handler = defineTenantHandler('snapshot', StepInput.Snapshot, (event) => itemScope(event.item), snapshot);
