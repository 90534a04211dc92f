import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { takeClaim } from '../src/app/guarded-write/claim.js';

/** Claim: the conditional put in the idempotency registry. */
export const handler = defineHandler('claim', StepInput.Claim, takeClaim);
