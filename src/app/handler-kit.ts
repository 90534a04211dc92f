import type { z } from 'zod';
import { InputRejectedError, PaperclipError } from '../domain/errors.js';
import { log, withCorrelation, type Correlation } from '../observability/telemetry.js';
import { services, type Services } from './services.js';
import type { TenantScope } from '../contracts/tenant-policy.js';
import { withRateLimitTally } from '../lib/retry-after.js';
import { withInvocationMemo } from '../lib/invocation-memo.js';
import type { RateLimitCounts } from '../domain/claim.js';

/** The part of the Lambda context the kit reads (the request id, for finding an invocation's lines). */
export interface InvocationContext {
  awsRequestId?: string;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
const str = (...values: unknown[]): string | undefined => values.find((v): v is string => typeof v === 'string' && v !== '');

/**
 * Tenant, idempotency key and execution of a workflow event, wherever its
 * state keeps them: `item` (Claim), `state.item` and the held claim's owner
 * (the item steps), `task` (ValidateRoute), `batch` (the batch steps), `executionArn`.
 */
export function correlationOf(step: string, event: unknown): Correlation {
  const e = obj(event) ?? {};
  const state = obj(e['state']) ?? e;
  const item = obj(e['item']) ?? obj(state['item']);
  // After Claim the state holds the claim decision, whose claim's owner is the execution holding it.
  const claim = obj(obj(state['claim'])?.['claim']) ?? obj(state['claim']);
  const task = obj(e['task']);
  const batch = obj(e['batch']);
  const tenant = str(item?.['tenant'], task?.['tenant'], batch?.['tenant'], e['tenant']);
  const idempotencyKey = str(item?.['key'], e['key']);
  const execution = str(e['executionArn'], claim?.['owner']);
  return {
    step,
    ...(tenant ? { tenant } : {}),
    ...(idempotencyKey ? { idempotencyKey } : {}),
    ...(execution ? { execution } : {}),
  };
}

/**
 * Shapes a Lambda handler: validate the event at the boundary with the
 * schema of the workflow state that invokes it, call the app layer with the
 * process-wide services, return its result. Errors keep their class name,
 * which is what the workflow's Catch clauses match.
 *
 * Every line logged during the invocation carries the step, tenant,
 * idempotency key and execution; the kit logs one line when the step ends
 * (INFO) or fails (WARN for an expected workflow error, ERROR otherwise).
 */
export function defineHandler<S extends z.ZodType, R>(name: string, schema: S, run: (s: Services, event: z.output<S>) => Promise<R>) {
  return async (event: unknown, context?: InvocationContext): Promise<R> => {
    const correlation = correlationOf(name, event);
    if (context?.awsRequestId) correlation.requestId = context.awsRequestId;
    return withCorrelation(correlation, async () => {
      const started = Date.now();
      try {
        const parsed = schema.safeParse(event);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          const field = issue?.path.map(String).join('.') || '(event)';
          throw new InputRejectedError(`${name}: event.${field}: ${issue?.message ?? 'invalid'}`, field);
        }
        // The 429s the step met (waited out or named in its error) and the time they cost are added to the item's
        // claim, for the batch summary; routing, before the claim, carries its own on the routed item (route.ts).
        const ran = await withRateLimitTally(() => withInvocationMemo(() => run(services(), parsed.data)));
        if (ran.tally.seen > 0 || ran.tally.waitedMs > 0 || ran.tally.pacedMs > 0) await tallyOnClaim(correlation, ran.tally);
        if ('error' in ran) throw ran.error;
        log().info(`${name} done`, { durationMs: Date.now() - started });
        return ran.result;
      } catch (error) {
        // An expected workflow error is a decision the workflow takes, not a bug: its message, no stack.
        if (error instanceof PaperclipError)
          log().warn(`${name} failed: ${error.name}: ${error.message}`, { durationMs: Date.now() - started });
        else log().error(`${name} failed`, { durationMs: Date.now() - started, error: error as Error });
        throw error;
      }
    });
  };
}

/**
 * Adds a step's rate-limit counts to its item's claim, through the tenant's session (its own claims only). A step
 * of no item (the list read) or before the claim exists (routing, whose counts ride on the routed item) has no claim
 * to add to here: those are logged only. Never fails the step.
 */
async function tallyOnClaim(correlation: Correlation, counts: RateLimitCounts): Promise<void> {
  const { tenant, idempotencyKey } = correlation;
  const logged = { rateLimited: counts.seen, rateLimitWaitMs: Math.round(counts.waitedMs), paceWaitMs: Math.round(counts.pacedMs) };
  if (counts.seen > 0) log().warn(`the vendor answered ${counts.seen} request(s) of this step with 429 (rate limited)`, logged);
  else log().info("this step waited for the identity's request pace", logged);
  if (!tenant || !idempotencyKey) return;
  await services()
    .forTenant({ tenant })
    .claims.addRateLimits(idempotencyKey, { seen: counts.seen, waitedMs: counts.waitedMs, pacedMs: counts.pacedMs })
    .catch((error: unknown) => log().warn(`could not add the step's rate-limit counts to its claim: ${(error as Error).message}`));
}

/** The session an item's steps act under: its tenant, and the identity routing chose for it. */
export function itemScope(item: { tenant: string; identity: string }): TenantScope {
  return { tenant: item.tenant, identity: item.identity };
}

/**
 * The session of a step that keeps a tenant's records (closing, sealing, compensation, approvals) and uses no
 * vendor login: the tenant only, so the session carries no identity tag and can read no identity's secret.
 */
export function recordScope(owner: { tenant: string }): TenantScope {
  return { tenant: owner.tenant };
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
