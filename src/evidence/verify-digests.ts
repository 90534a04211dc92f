import { SEAL_EVENT_TYPES } from './anchors.js';
import { dayOf } from './anchor-layout.js';
import { digestTenants, verifyTenantDigests } from './digests.js';
import type { EvidenceContext } from './folder.js';

/**
 * `audit verify`'s check of each tenant's daily digests (digests.ts), with the
 * tenant's first seal taken from the audit table too: deleting the first
 * digests and anchors does not move the start of the days that must have one.
 */

interface DigestsResult {
  findings: Array<{ kind: 'altered' | 'removed' | 'added' | 'unsealed'; batch: string; object?: string; detail: string }>;
  notes: string[];
}

/** The day of the tenant's earliest sealing event in its batch chains, if any. */
async function firstSealDay(ctx: Pick<EvidenceContext, 'audit'>, tenant: string): Promise<string | undefined> {
  let first: string | undefined;
  for (const chain of await ctx.audit.chainsStartingWith(`batch:${tenant}:`)) {
    const seal = (await ctx.audit.events(chain)).find((e) => (SEAL_EVENT_TYPES as readonly string[]).includes(e.type));
    if (seal && (!first || dayOf(seal.at) < first)) first = dayOf(seal.at);
  }
  return first;
}

export async function verifyDigestsOf(
  ctx: EvidenceContext,
  tenants: readonly string[],
  options: { now?: number } = {},
): Promise<DigestsResult> {
  const result: DigestsResult = { findings: [], notes: [] };
  for (const tenant of tenants) {
    const first = await firstSealDay(ctx, tenant);
    const one = await verifyTenantDigests(ctx, tenant, {
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(first ? { firstSealDay: first } : {}),
      // On AWS the writer runs every hour, so a late digest is a finding; the local stack digests when it is started.
      late: ctx.config.environment === 'aws' ? 'finding' : 'note',
    });
    result.findings.push(...one.findings.map((f) => ({ batch: `${tenant}/(digests)`, ...f })));
    result.notes.push(...one.notes);
  }
  return result;
}

/** Every tenant that has (or should have) digests: those with batches, with digests, or in the configuration. */
export async function tenantsWithDigests(ctx: EvidenceContext, withBatches: readonly string[]): Promise<string[]> {
  return [...new Set([...withBatches, ...(await digestTenants(ctx))])].filter(Boolean).sort();
}
