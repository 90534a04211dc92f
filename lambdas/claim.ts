import '../src/composition/lambda.js';
import { defineTenantHandler, itemScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { claimStep } from '../src/app/guarded-write/claim.js';

/** Claim: the conditional put in the idempotency registry (and a pre-state routing already read), under the item's tenant session. */
export const handler = defineTenantHandler('claim', StepInput.Claim, (event) => itemScope(event.state.item), claimStep);
