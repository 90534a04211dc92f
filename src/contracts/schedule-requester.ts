/**
 * The requester of a batch the tenant's EventBridge schedule starts: the
 * schedule's name. The CDK app puts it in the schedule's target input; ReadList
 * accepts it without an attestation only in this exact form for the batch's
 * own tenant (docs/approvals.md, "Who asked").
 */
export function scheduleName(prefix: string, tenant: string): string {
  return `${prefix}-batch-${tenant}`;
}

export function scheduleRequester(prefix: string, tenant: string): string {
  return `schedule:${scheduleName(prefix, tenant)}`;
}
