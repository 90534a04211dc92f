import { defineTenantHandler, itemScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { takeClaim } from '../src/app/guarded-write/claim.js';

/** Claim: the conditional put in the idempotency registry, under the item's tenant session. */
export const handler = defineTenantHandler('claim', StepInput.Claim, (event) => itemScope(event.item), takeClaim);
