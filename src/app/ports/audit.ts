import { z } from 'zod';
import type { AuditEvent } from '../../domain/audit-chain.js';
import type { AuditEventInput } from '../../domain/audit-events.js';

/**
 * The hash-chained audit log as the app layer uses it: append to a chain, read a chain back. The DynamoDB adapter
 * implements it (src/adapters/dynamodb/audit-log.ts); a test fakes it in memory.
 */
export interface AuditPort {
  append(chain: string, input: AuditEventInput): Promise<AuditEvent>;
  /** Appends only if `after` is still the chain's latest event (undefined: the chain is empty); undefined when another append came first. */
  appendAfter(chain: string, after: AuditEvent | undefined, input: AuditEventInput): Promise<AuditEvent | undefined>;
  /** The chain's latest event; undefined for an empty chain. */
  head(chain: string): Promise<AuditEvent | undefined>;
  /** The names of the chains that begin with `prefix` (for audits and reports, never on a write path). */
  chainsStartingWith(prefix: string): Promise<string[]>;
  events(chain: string): Promise<AuditEvent[]>;
}

/**
 * A stored audit event's envelope, what a read is parsed with. Loose on purpose: an attribute nobody wrote stays
 * on the event, so the chain's hash check sees it and fails, rather than the read dropping it unseen.
 */
export const AuditEventRecord = z.looseObject({
  chain: z.string(),
  seq: z.number().int().min(1),
  at: z.string(),
  prevHash: z.string(),
  hash: z.string(),
  type: z.string(),
  actor: z.string(),
  data: z.record(z.string(), z.unknown()),
});
