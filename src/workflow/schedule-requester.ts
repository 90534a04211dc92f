/**
 * The requester of a batch the tenant's EventBridge schedule starts: the
 * schedule's name. The schedule's entry point, the start-scheduled-batch
 * function, names and attests it from the tenant (src/app/scheduled-batch.ts);
 * ReadList accepts it, like any requester, only attested (docs/approvals.md, "Who asked").
 */
export function scheduleName(prefix: string, tenant: string): string {
  return `${prefix}-batch-${tenant}`;
}

export function scheduleRequester(prefix: string, tenant: string): string {
  return `schedule:${scheduleName(prefix, tenant)}`;
}
