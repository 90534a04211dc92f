import type { Services } from './services.js';
import { digestTenants, writeTenantDigests } from '../evidence/digests.js';

export interface DigestRun {
  /** Digest keys written, oldest day first per tenant. */
  written: string[];
  tenants: number;
  /** Tenants whose digests could not be written, with why (the next run tries again). */
  failed: Array<{ tenant: string; error: string }>;
}

/**
 * The digest function: for every tenant (configured, or with anchors in the bucket), the signed digest of each
 * day that is over and has none yet, quiet days included. Idempotent: a run finds what earlier runs wrote and
 * continues from there, so the hourly schedule, a retry and a local run at start-up never write a day twice.
 * One tenant's failure does not stop the others; the run fails afterwards so the schedule's error alarm sees it.
 */
export async function writeDailyDigests(
  s: Pick<Services, 'evidence' | 'config' | 'digestKeys'>,
  options: { now?: number; tenants?: readonly string[] } = {},
): Promise<DigestRun> {
  const now = options.now ?? Date.now();
  const tenants = options.tenants ?? (await digestTenants(s));
  const run: DigestRun = { written: [], tenants: tenants.length, failed: [] };
  for (const tenant of tenants) {
    try {
      run.written.push(...(await writeTenantDigests(s, tenant, now)));
    } catch (error) {
      run.failed.push({ tenant, error: (error as Error).message });
    }
  }
  return run;
}

/** As writeDailyDigests, throwing when any tenant failed (the Lambda's invocation error is what alarms). */
export async function writeDailyDigestsOrThrow(
  s: Pick<Services, 'evidence' | 'config' | 'digestKeys'>,
  options: { now?: number } = {},
): Promise<DigestRun> {
  const run = await writeDailyDigests(s, options);
  if (run.failed.length > 0) {
    throw new Error(`daily digests not written for ${run.failed.map((f) => `${f.tenant} (${f.error})`).join('; ')}`);
  }
  return run;
}
