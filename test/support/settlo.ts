/** The note a reconciliation leaves with a 处理 on Settlo. */
export const SETTLE_NOTE = '已由 Paperclip 对账核对';

/** A scheduled 处理 (settle) of one Settlo bill with the reconciliation's note, as the batch routes it. */
export function settleTask({ taskId, billNo, tenant = 'acme' }: { taskId: string; billNo: string; tenant?: string }) {
  return { taskId, tenant, billNo, action: 'settle', requestedBy: 'schedule', params: { note: SETTLE_NOTE } };
}

/** Bills of one tenant in a Settlo scenario: pending mismatches to settle, overcharges to refund, bills already processed. */
interface SettloTenantBills {
  pending: number;
  overcharge?: number;
  processed?: number;
}

/** A Settlo reset: the seed, each tenant's bills (none unless named), and the 2-second undo window the tests run with. */
export function settloScenario(seed: number, tenants: Record<string, SettloTenantBills>) {
  return {
    seed,
    undoWindowSeconds: 2,
    tenants: Object.entries(tenants).map(([id, bills]) => ({
      id,
      pending: bills.pending,
      overcharge: bills.overcharge ?? 0,
      processed: bills.processed ?? 0,
    })),
  };
}
