import type { ItemState } from './state.js';

/** The item's record.json: who acted for whom, what was seen before and after, and every evidence object. */
export function outcomeRecord(state: ItemState, outcome: string, executionArn: string, extra: Record<string, unknown> = {}) {
  const { item } = state;
  const evidence = [...(state.snapshot?.evidence ?? []), ...(state.write?.evidence ?? []), ...(state.readback?.evidence ?? [])];
  return {
    outcome,
    key: item.key,
    identity: item.identity,
    tenant: item.tenant,
    taskId: item.taskId,
    billNo: item.billNo,
    action: item.action,
    tier: state.write?.tier ?? item.tier,
    executionArn,
    // The approval the write proved, never what the workflow carried in $.approval.
    approval: state.write?.approval ?? null,
    preState: state.snapshot?.preStatus ?? null,
    verdict: state.readback?.verdict ?? null,
    observedStatus: state.readback?.observedStatus ?? null,
    readbackSource: state.readback?.source ?? null,
    degraded: state.readback?.degraded ?? false,
    evidence,
    recordedAt: new Date().toISOString(),
    ...extra,
  };
}
