import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadRuntime } from '../src/config/runtime.js';
import type { SoakTenant } from './faults.js';

export interface SoakPolicy {
  /** Short, so a claim left by the killed runner can be taken over within the run. */
  claimLeaseSeconds: number;
  readbackDeadlineMs: number;
  maxConcurrency: number;
}

/**
 * The soak's Paperclip config: the local config with one identity per soak
 * tenant (the simulator's account scheme) and the soak's timing policy.
 * Written into the data folder and validated like any config.
 */
export function writeSoakConfig(baseConfigPath: string, tenants: readonly SoakTenant[], policy: SoakPolicy, outPath: string): string {
  const config = parse(readFileSync(baseConfigPath, 'utf8')) as Record<string, any>;
  config['vendor']['site_pack'] = resolve(config['vendor']['site_pack']);
  config['identities'] = tenants.map((t) => ({
    id: `svc-recon-${t.id}`,
    tenants: [t.id],
    credentials: { source: 'inline', username: `svc-recon-${t.id}`, password: `pw-${t.id}-2026`, api_token: `tok-${t.id}` },
  }));
  config['tenants'] = tenants.map((t) => ({
    id: t.id,
    identity: `svc-recon-${t.id}`,
    approvers: [`finance@${t.id}.example`],
    actions_by_kind: { mismatch: 'mark_processed', overcharge: 'refund' },
    action_params: { refund: { reason: '重复扣款退款' } },
  }));
  config['write_policy']['claim_lease_seconds'] = policy.claimLeaseSeconds;
  config['write_policy']['readback_deadline_ms'] = policy.readbackDeadlineMs;
  config['limits'] = { ...(config['limits'] ?? {}), max_concurrency: policy.maxConcurrency };
  writeFileSync(outPath, stringify(config));
  loadRuntime(outPath);
  return outPath;
}
