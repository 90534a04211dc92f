import { createHash } from 'node:crypto';
import { GENESIS_HASH, sealEvent, type AuditEvent } from '../../../src/domain/audit-chain.js';
import type { AuditEventInput } from '../../../src/domain/audit-events.js';
import {
  itemLockKey,
  rateLimitFields,
  type Claim,
  type ClaimStatus,
  type ItemLock,
  type RateLimitCounts,
} from '../../../src/domain/claim.js';
import { ClaimFencedError } from '../../../src/domain/errors.js';
import type { RoutedItem } from '../../../src/domain/routing.js';
import type { Services } from '../../../src/app/services.js';
import type { AuditPort } from '../../../src/app/ports/audit.js';
import type { ClaimsPort } from '../../../src/app/ports/claims.js';
import type { ObjectStore, ObjectVersion, StoredObject } from '../../../src/app/ports/evidence.js';
import type { ItemState } from '../../../src/app/guarded-write/state.js';

/**
 * In-memory fakes of the ports the guarded-write steps use, with the guarantees the DynamoDB and S3 adapters give
 * (a create that fails on an existing key, transitions conditional on owner, version and status, a linear audit
 * chain), so a step is tested against those guarantees without Chromium or an emulator.
 */

const copy = <T>(value: T): T => structuredClone(value);

export class MemoryClaims implements ClaimsPort {
  readonly rows = new Map<string, Claim>();
  /** Calls in order, to show what a step did and did not do. */
  readonly calls: string[] = [];

  async tryCreate(claim: Claim): Promise<boolean> {
    this.calls.push(`tryCreate ${claim.key}`);
    if (this.rows.has(claim.key)) return false;
    this.rows.set(claim.key, copy(claim));
    return true;
  }

  async get(key: string): Promise<Claim | undefined> {
    const row = this.rows.get(key);
    return row && copy(row);
  }

  async transition(
    key: string,
    guard: { owner: string; version: number; from: readonly ClaimStatus[] },
    to: ClaimStatus,
    set: Partial<Omit<Claim, 'key' | 'owner' | 'version' | 'status'>> = {},
  ): Promise<Claim> {
    this.calls.push(`transition ${key} ${guard.from.join('/')}->${to}`);
    const row = this.rows.get(key);
    if (!row || row.owner !== guard.owner || row.version !== guard.version || !guard.from.includes(row.status)) {
      throw new ClaimFencedError(`claim ${key} is no longer held by this run in ${guard.from.join('/')} at version ${guard.version}`, {
        key,
        owner: guard.owner,
        version: guard.version,
      });
    }
    const defined = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
    const next: Claim = { ...row, ...defined, status: to, updatedAt: new Date().toISOString() };
    this.rows.set(key, next);
    return copy(next);
  }

  async takeOver(previous: Claim, newOwner: string, leaseUntil: string): Promise<Claim | undefined> {
    this.calls.push(`takeOver ${previous.key}`);
    const row = this.rows.get(previous.key);
    if (!row || row.owner !== previous.owner || row.version !== previous.version || row.status !== previous.status) return undefined;
    const next: Claim = { ...row, owner: newOwner, version: row.version + 1, leaseUntil, updatedAt: new Date().toISOString() };
    this.rows.set(previous.key, next);
    return copy(next);
  }

  async unsettled(): Promise<Claim[]> {
    return [...this.rows.values()].filter((c) => c.status === 'CLAIMED' || c.status === 'WRITING').map(copy);
  }

  async updatedSince(): Promise<Claim[]> {
    return [...this.rows.values()].map(copy);
  }

  async existing(keys: readonly string[]): Promise<Claim[]> {
    return keys.flatMap((k) => (this.rows.has(k) ? [copy(this.rows.get(k)!)] : []));
  }

  async byTask(taskId: string, tenant?: string): Promise<Claim[]> {
    return [...this.rows.values()].filter((c) => c.taskId === taskId && (tenant === undefined || c.tenant === tenant)).map(copy);
  }

  /** Items' open-write records, by their key (the table holds them beside the claims; here they are kept apart). */
  readonly locks = new Map<string, ItemLock>();

  async itemLock(tenant: string, billNo: string): Promise<ItemLock | undefined> {
    const lock = this.locks.get(itemLockKey(tenant, billNo));
    return lock && copy(lock);
  }

  async holdItem(
    lock: { tenant: string; billNo: string; holder: string; holderTask: string; holderAction: string },
    expectedHolder?: string,
  ): Promise<boolean> {
    const key = itemLockKey(lock.tenant, lock.billNo);
    this.calls.push(`holdItem ${lock.billNo} ${lock.holder}`);
    if (this.locks.get(key)?.holder !== expectedHolder) return false;
    this.locks.set(key, { key, kind: 'open-item', ...lock, heldSince: new Date().toISOString() });
    return true;
  }

  async releaseItem(tenant: string, billNo: string, holder: string): Promise<boolean> {
    const key = itemLockKey(tenant, billNo);
    this.calls.push(`releaseItem ${billNo} ${holder}`);
    const lock = this.locks.get(key);
    if (!lock || lock.holder !== holder) return false;
    this.locks.set(key, { key, kind: 'open-item', tenant, billNo });
    return true;
  }

  async addRateLimits(key: string, counts: RateLimitCounts): Promise<void> {
    const claim = this.rows.get(key);
    if (!claim) return;
    const added = rateLimitFields(counts);
    this.rows.set(key, {
      ...claim,
      ...Object.fromEntries(
        Object.entries(added).map(([field, n]) => [field, ((claim as unknown as Record<string, number>)[field] ?? 0) + n]),
      ),
    });
  }
}

export class MemoryAudit implements AuditPort {
  readonly chains = new Map<string, AuditEvent[]>();

  async append(chain: string, input: AuditEventInput): Promise<AuditEvent> {
    const events = this.chains.get(chain) ?? [];
    const last = events.at(-1);
    const event = sealEvent(chain, (last?.seq ?? 0) + 1, last?.hash ?? GENESIS_HASH, input);
    this.chains.set(chain, [...events, event]);
    return event;
  }

  async appendAfter(chain: string, after: AuditEvent | undefined, input: AuditEventInput): Promise<AuditEvent | undefined> {
    if ((this.chains.get(chain)?.at(-1)?.seq ?? 0) !== (after?.seq ?? 0)) return undefined;
    return this.append(chain, input);
  }

  async head(chain: string): Promise<AuditEvent | undefined> {
    return this.chains.get(chain)?.at(-1);
  }

  async chainsStartingWith(prefix: string): Promise<string[]> {
    return [...this.chains.keys()].filter((c) => c.startsWith(prefix));
  }

  async events(chain: string): Promise<AuditEvent[]> {
    return [...(this.chains.get(chain) ?? [])];
  }

  types(chain: string): string[] {
    return (this.chains.get(chain) ?? []).map((e) => e.type);
  }
}

export class MemoryObjects implements ObjectStore {
  readonly objects = new Map<string, { body: Buffer; contentType: string }>();

  constructor(readonly bucket = 'evidence') {}

  async put(key: string, body: Buffer | string, contentType: string): Promise<StoredObject> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    this.objects.set(key, { body: bytes, contentType });
    return { key, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length, contentType };
  }

  async get(key: string): Promise<Buffer | undefined> {
    return this.objects.get(key)?.body;
  }

  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }

  async storedChecksum(key: string): Promise<{ sha256: string; bytes: number } | null> {
    const object = this.objects.get(key);
    return object ? { sha256: createHash('sha256').update(object.body).digest('hex'), bytes: object.body.length } : null;
  }

  async versions(): Promise<Map<string, ObjectVersion[]>> {
    return new Map();
  }

  async getVersion(): Promise<Buffer | undefined> {
    return undefined;
  }

  pinned(): ObjectStore {
    return this;
  }

  async folders(prefix: string): Promise<string[]> {
    const folders = new Set<string>();
    for (const key of this.objects.keys()) {
      if (!key.startsWith(prefix)) continue;
      const slash = key.indexOf('/', prefix.length);
      if (slash >= 0) folders.add(key.slice(0, slash + 1));
    }
    return [...folders].sort();
  }

  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}

/**
 * Services over the memory fakes. Only what the guarded-write steps read is given; touching anything else fails
 * the test by name, so a step that starts using another port is noticed here.
 */
export function memoryServices(
  parts: Partial<Services> = {},
): Services & { claims: MemoryClaims; audit: MemoryAudit; evidence: MemoryObjects } {
  const given = {
    config: { write_policy: { claim_lease_seconds: 300, approval_timeout_seconds: 3600 } },
    claims: new MemoryClaims(),
    audit: new MemoryAudit(),
    evidence: new MemoryObjects(),
    approvals: { byKey: async () => [] },
    ...parts,
  } as Record<string, unknown>;
  return new Proxy(given, {
    get(target, name) {
      if (typeof name === 'string' && !(name in target)) throw new Error(`the memory services fake no ${name}`);
      return target[name as string];
    },
  }) as unknown as Services & { claims: MemoryClaims; audit: MemoryAudit; evidence: MemoryObjects };
}

export const EXECUTION = 'arn:aws:states:us-east-1:000000000000:execution:pc-guarded-write:run-1';
export const OTHER_EXECUTION = 'arn:aws:states:us-east-1:000000000000:execution:pc-guarded-write:run-0';

export function routedItem(overrides: Partial<RoutedItem> = {}): RoutedItem {
  return {
    key: `k-${'0123456789abcdef'.repeat(2)}01234567`,
    taskId: 'T-1',
    tenant: 'acme',
    billNo: 'ACME-202611-0001',
    action: 'mark_processed',
    params: {},
    requestedBy: 'operator:alice',
    identity: 'acme-bot',
    reversibility: 'reversible',
    needsApproval: false,
    approvalTimeoutSeconds: 3600,
    tier: 'browser',
    ...overrides,
  };
}

/** The workflow state after routing, every step's result still null. */
export function itemState(item: RoutedItem, overrides: Partial<ItemState> = {}): ItemState {
  return {
    item,
    claim: null,
    snapshot: null,
    approval: null,
    write: null,
    writeError: null,
    readback: null,
    takeoverReason: null,
    compensation: null,
    ...overrides,
  };
}

/** A claim row as another run left it: the item's fields (a routed item, or a task's), owned by another execution. */
export function storedClaim(
  item: Pick<Claim, 'key' | 'taskId' | 'tenant' | 'billNo' | 'action' | 'identity'>,
  overrides: Partial<Claim> = {},
): Claim {
  const at = new Date().toISOString();
  return {
    key: item.key,
    taskId: item.taskId,
    tenant: item.tenant,
    billNo: item.billNo,
    action: item.action,
    identity: item.identity,
    owner: OTHER_EXECUTION,
    status: 'CLAIMED',
    version: 1,
    leaseUntil: new Date(Date.now() + 60_000).toISOString(),
    attempts: 1,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
