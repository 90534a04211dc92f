import type { z } from 'zod';
import { InputRejectedError } from '../domain/errors.js';
import { services, type Services } from './services.js';

/**
 * Shapes a Lambda handler: validate the event at the boundary with the
 * schema of the workflow state that invokes it, call the app layer with the
 * process-wide services, return its result. Errors keep their class name,
 * which is what the workflow's Catch clauses match.
 */
export function defineHandler<S extends z.ZodType, R>(name: string, schema: S, run: (s: Services, event: z.output<S>) => Promise<R>) {
  return async (event: unknown): Promise<R> => {
    const parsed = schema.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.map(String).join('.') || '(event)';
      throw new InputRejectedError(`${name}: event.${field}: ${issue?.message ?? 'invalid'}`, field);
    }
    return run(services(), parsed.data);
  };
}
