import '../src/composition/lambda.js';
import { defineHandler } from '../src/app/handler-kit.js';
import { StepInput } from '../src/app/guarded-write/state.js';
import { validateAndRoute } from '../src/app/guarded-write/route.js';

/** Validate & route: the task's schema, identity scope and action policy, before any browser. */
export const handler = defineHandler('validate-route', StepInput.ValidateRoute, validateAndRoute);
