import '../src/composition/lambda.js';
import { defineTenantHandler, recordScope } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { takeover } from '../src/app/guarded-write/takeover.js';

/** Takeover: the machine refuses to decide; a person gets the item with its evidence, under the item's tenant session. */
export const handler = defineTenantHandler('takeover', StepInput.Takeover, (event) => recordScope(event.state.item), takeover);
