import type { z } from 'zod';
import { InputRejectedError } from '../domain/errors.js';
import { services, type Services } from './services.js';
import type { TenantScope } from '../adapters/tenant-session/policy.js';

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

/** The session an item's steps act under: its tenant, and the identity routing chose for it. */
export function itemScope(item: { tenant: string; identity: string }): TenantScope {
  return { tenant: item.tenant, identity: item.identity };
}

/**
 * A handler that acts for one tenant: the app layer gets the services under
 * that tenant's session (services.forTenant), so a bug or a forged event can
 * reach only that tenant's items, evidence and identity secret.
 */
export function defineTenantHandler<S extends z.ZodType, R>(
  name: string,
  schema: S,
  scopeOf: (event: z.output<S>) => TenantScope,
  run: (s: Services, event: z.output<S>) => Promise<R>,
) {
  return defineHandler(name, schema, (s, event) => run(s.forTenant(scopeOf(event)), event));
}
