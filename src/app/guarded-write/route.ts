import type { Services } from '../services.js';
import { routeTask, type RoutedItem } from '../../domain/routing.js';
import { proveOwnership } from '../ownership.js';
import { assertCompensationPath } from '../compensation-path.js';

/** Validate & route: schema, tenant scope, action policy, a compensation's origin, and the bill's owner read from the vendor. */
export async function validateAndRoute(s: Services, input: { task: unknown; executionArn: string }): Promise<RoutedItem> {
  const item = routeTask(input.task, s.config, s.pack);
  // Routing needs no AWS call; what follows reads the tenant's claims and audit chain and the identity's token, under its session.
  const tenant = s.forTenant({ tenant: item.tenant, identity: item.identity });
  await assertCompensationPath(tenant, item);
  await proveOwnership(tenant, item);
  const actor = { identity: item.identity, tenant: item.tenant, taskId: item.taskId, executionArn: input.executionArn };
  await tenant.audit.append(item.key, { type: 'routed', actor: item.identity, data: { ...actor, item } });
  return item;
}
