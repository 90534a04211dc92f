/**
 * Type test, checked by `tsc -p tsconfig.json` (the tsconfig includes test/; `npm test` runs it): every line marked
 * `@ts-expect-error` must fail to compile, or tsc reports the directive as unused and fails. Nothing here runs.
 */
import type { AuditLog } from '../../src/adapters/dynamodb/audit-log.js';
import type { AuditEvent } from '../../src/domain/audit-chain.js';
import { eventsOfType, hasType, isEvent, isEventOf } from '../../src/domain/audit-events.js';

export async function appendChecks(log: AuditLog): Promise<void> {
  await log.append('k', { type: 'claimed', actor: 'a', data: { owner: 'arn:x', version: 1 } });
  // @ts-expect-error: a claimed event without its version
  await log.append('k', { type: 'claimed', actor: 'a', data: { owner: 'arn:x' } });
  // @ts-expect-error: a type the union does not have
  await log.append('k', { type: 'claimd', actor: 'a', data: { owner: 'arn:x', version: 1 } });
  // @ts-expect-error: a field the event does not have
  await log.append('k', { type: 'claimed', actor: 'a', data: { owner: 'arn:x', version: 1, note: 'x' } });
  const wrongType = { verdict: 'confirmed', seen: [], source: 'list', next: 'x', why: 'y', degraded: 'no', evidence: [] };
  // @ts-expect-error: a field of the wrong type (degraded is a boolean)
  await log.append('k', { type: 'readback', actor: 'a', data: wrongType });
}

export function readChecks(events: readonly AuditEvent[]): unknown[] {
  const compensated = eventsOfType(events, 'compensated')[0];
  const inverseKey: string | undefined = compensated?.data.inverseKey;
  // @ts-expect-error: `attestation` is a field of compensation_started, not of compensated
  const attestation = compensated?.data.attestation;
  // @ts-expect-error: a field read back is optional (an older shape may lack it), never assumed present
  const outcome: string = compensated!.data.outcome;

  const event = events[0];
  const verdict = isEvent(event, 'readback') ? event.data.verdict : undefined;
  // @ts-expect-error: `verdict` is a field of readback, not of claimed
  const notClaimed = isEvent(event, 'claimed') ? event.data.verdict : undefined;
  const closing = isEventOf(event, ['compensated', 'compensation_failed']) ? event.data.restoredStatus : undefined;
  // @ts-expect-error: a misspelt type in a reader
  const misspelt = eventsOfType(events, 'readbak');
  // @ts-expect-error: a misspelt type in a presence check
  const presence = hasType(event, 'write_start');
  return [inverseKey, attestation, outcome, verdict, notClaimed, closing, misspelt, presence];
}
