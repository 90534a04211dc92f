import type { Services } from './services.js';
import type { RoutedItem } from '../domain/routing.js';
import { InputRejectedError } from '../domain/errors.js';
import { tenantOfKey } from '../domain/task.js';
import { compensationStartIsAttested } from './requester.js';
import { isEvent, isEventOf, type StoredEventOf } from '../domain/audit-events.js';

/**
 * `compensates` is accepted only from the compensation path. A task body that
 * claims to undo a write is refused unless the original write exists, belongs
 * to the same tenant, task and bill, registered exactly this inverse, and the
 * compensation path (paperclip compensate, or the workflow's own Compensate
 * step) opened this inverse in the original's audit trail before starting it,
 * signed with the requester attestation key, and has not closed it. Anyone who
 * can only start executions, or also write the audit table, cannot make that
 * signature.
 */
export async function assertCompensationPath(s: Services, item: RoutedItem): Promise<void> {
  const originalKey = item.compensates;
  if (originalKey === undefined) return;
  const refuse = (why: string): never => {
    throw new InputRejectedError(`task.compensates: ${why}`, 'compensates');
  };
  // Checked before any read: the tenant's session could not read another tenant's write anyway (AccessDenied).
  if (tenantOfKey(originalKey) !== item.tenant) return refuse(`${originalKey} is not a write of tenant "${item.tenant}"`);
  const original = await s.claims.get(originalKey);
  if (!original) return refuse(`there is no write with key ${originalKey}; nothing to compensate`);
  if (original.tenant !== item.tenant) return refuse(`${originalKey} is not a write of tenant "${item.tenant}"`);
  if (original.taskId !== item.taskId || original.billNo !== item.billNo) {
    return refuse(`${originalKey} is a write of another task or bill; an inverse undoes its own write only`);
  }
  if (original.inverse?.action !== item.action) {
    return refuse(
      `${originalKey} registered ${original.inverse ? `"${original.inverse.action}"` : 'no inverse'} as its way back, not "${item.action}"`,
    );
  }
  const trail = await s.audit.events(originalKey);
  let open = false;
  for (const event of trail) {
    // Only a start the compensation path signed opens anything: an event appended by an audit-table writer without the key does not.
    if (isEvent(event, 'compensation_started') && event.data.inverseKey === item.key)
      open = await signedByCompensationPath(s, originalKey, item, event.data);
    if (isEventOf(event, ['compensated', 'compensation_failed']) && event.data.inverseKey === item.key) open = false;
  }
  if (!open) {
    refuse(
      'accepted only from the compensation path (paperclip compensate, or the workflow ' +
        'after a wrong readback); run paperclip compensate <key> --reason "…" instead',
    );
  }
}

async function signedByCompensationPath(
  s: Services,
  originalKey: string,
  item: RoutedItem,
  data: StoredEventOf<'compensation_started'>['data'],
): Promise<boolean> {
  const { requestedBy } = data;
  if (requestedBy === undefined || data.inverse !== item.action) return false;
  const claim = { compensates: originalKey, inverseKey: item.key, inverseAction: item.action, requestedBy };
  return compensationStartIsAttested(s, claim, data.attestation);
}
