import { z } from 'zod';
import { defineHandler, ExecutionArn } from '../src/app/handler-kit.js';
import { validateAndRoute } from '../src/app/guarded-write/route.js';

/** Validate & route: the task's schema, identity scope and action policy, before any browser. */
export const handler = defineHandler('validate-route', z.object({ task: z.unknown(), executionArn: ExecutionArn }), (s, event) =>
  validateAndRoute(s, event),
);
