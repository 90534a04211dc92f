import { createHash } from 'node:crypto';
import { tenantKeyPrefix } from './task.js';

/**
 * The slots of one identity's vendor sessions for one tenant, without storage. Each slot is one record in the
 * claims table under the tenant's key prefix (`k-<tenant>_session_<identity digest>_<slot>`), so the tenant
 * session's LeadingKeys condition confines a function to its own tenant's slots, as it does its claims. A slot is
 * free when nobody holds it or its holder's lease ran out (a holder that died frees it that way).
 */

export interface SessionSlotScope {
  tenant: string;
  identity: string;
}

export function sessionSlotKey(scope: SessionSlotScope, slot: number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([scope.tenant, scope.identity]))
    .digest('hex');
  return `${tenantKeyPrefix(scope.tenant)}session_${digest.slice(0, 24)}_${slot}`;
}
