import { z } from 'zod';
import { InputRejectedError } from '../domain/errors.js';
import { services, type Services } from './services.js';

/**
 * Shapes a Lambda handler: validate the event at the boundary, call the
 * domain with the process-wide services, return its result. Errors keep their
 * class name, which is what the workflow's Catch clauses match.
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

/** The workflow state every guarded-write step receives; built by our own ASL, checked loosely. */
export const ItemStateEvent = z
  .object({
    item: z.object({ key: z.string(), taskId: z.string(), tenant: z.string(), billNo: z.string(), action: z.string() }).passthrough(),
  })
  .passthrough();

export const ExecutionArn = z.string().min(1);
