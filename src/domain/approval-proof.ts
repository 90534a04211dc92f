import { createHash } from 'node:crypto';
import { canonicalJson } from './audit-chain.js';

/**
 * What an approval is bound to: the exact action it allows. The approval
 * request stores this hash when it is made; the write recomputes it from the
 * item it is about to execute and refuses on any difference (another bill,
 * amount, reason, action or tenant than the approver saw).
 */
export interface ApprovedPayload {
  key: string;
  tenant: string;
  billNo: string;
  action: string;
  params: Readonly<Record<string, string>>;
}

export function actionPayloadHash(item: ApprovedPayload): string {
  const payload = { key: item.key, tenant: item.tenant, billNo: item.billNo, action: item.action, params: item.params };
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}
