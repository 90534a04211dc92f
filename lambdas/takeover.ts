import '../src/composition/lambda.js';
import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { takeover } from '../src/app/guarded-write/takeover.js';

/** Takeover: the machine refuses to decide; a person gets the item with its evidence. */
export const handler = defineHandler('takeover', StepInput.Takeover, takeover);
