import '../src/composition/lambda.js';
import { defineTenantHandler, itemScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { browserWrite } from '../src/app/guarded-write/write.js';

/** BrowserWrite: the one step that changes vendor state, under the item's tenant session. */
export const handler = defineTenantHandler('browser-write', StepInput.BrowserWrite, (event) => itemScope(event.item), browserWrite);
