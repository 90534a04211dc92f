import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadRuntime } from '../src/config/runtime.js';
import type { SoakBackOffice, SoakTenant } from './back-office.js';

export interface SoakPolicy {
  /** Short, so a claim left by the killed runner can be taken over within the run. */
  claimLeaseSeconds: number;
  readbackDeadlineMs: number;
  maxConcurrency: number;
}

/**
 * The soak's Paperclip config: the back office's local config with one
 * identity per soak tenant (the back office's account scheme) and the soak's
 * timing policy. Written into the data folder and validated like any config.
 */
export function writeSoakConfig(
  baseConfigPath: string,
  backOffice: Pick<SoakBackOffice, 'configFor'>,
  tenants: readonly SoakTenant[],
  policy: SoakPolicy,
  outPath: string,
): string {
  const config = parse(readFileSync(baseConfigPath, 'utf8')) as Record<string, any>;
  config['vendor']['site_pack'] = resolve(config['vendor']['site_pack']);
  const { identities, tenants: configured } = backOffice.configFor(tenants);
  config['identities'] = identities;
  config['tenants'] = configured;
  config['write_policy']['claim_lease_seconds'] = policy.claimLeaseSeconds;
  config['write_policy']['readback_deadline_ms'] = policy.readbackDeadlineMs;
  config['limits'] = { ...(config['limits'] ?? {}), max_concurrency: policy.maxConcurrency };
  // One vendor session per item at once plus the list read, so the soak's invariants are not bent by the cap.
  config['vendor_sessions'] = { ...(config['vendor_sessions'] ?? {}), max_per_identity: Math.min(40, policy.maxConcurrency + 1) };
  writeFileSync(outPath, stringify(config));
  loadRuntime(outPath);
  return outPath;
}
