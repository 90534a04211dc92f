import { isAbsolute, resolve } from 'node:path';
import type { PaperclipConfig } from './schema.js';
import { stagesOf, type SitePack } from '../sitepack/schema.js';
import { browserStepBudget } from '../contracts/sizing.js';
import { loadConfig } from './load.js';
import { loadSitePack } from '../sitepack/load.js';
import { ValidationError } from './errors.js';
import { own } from '../lib/own.js';

/** Config and the site pack it names, checked against each other. */
export interface Runtime {
  config: PaperclipConfig;
  sitePack: SitePack;
}

export function checkConfigAgainstPack(config: PaperclipConfig, pack: SitePack, source: string): void {
  const issues: Array<{ path: string; message: string }> = [];
  const policy = config.write_policy;
  for (const name of Object.keys(config.actions)) {
    if (!own(pack.actions, name)) {
      issues.push({ path: `actions.${name}`, message: `site pack "${pack.site}" has no action "${name}"` });
    }
  }
  for (const [name, action] of Object.entries(pack.actions)) {
    if (!own(config.actions, name)) continue;
    if (
      action.reversibility === 'irreversible' &&
      !policy.approval_required.includes(name) &&
      policy.irreversible_without_approval[name] === undefined
    ) {
      issues.push({
        path: 'write_policy.approval_required',
        message: `"${name}" is irreversible in the site pack: add it to approval_required (or to irreversible_without_approval with a reason)`,
      });
    }
  }
  config.tenants.forEach((tenant, index) => {
    const mapped: Array<[string, string]> = [
      ...Object.entries(tenant.actions_by_kind).map(([kind, action]): [string, string] => [`actions_by_kind.${kind}`, action]),
      ...Object.entries(tenant.actions_by_status).map(([status, action]): [string, string] => [`actions_by_status.${status}`, action]),
      ...(tenant.default_action ? [['default_action', tenant.default_action] as [string, string]] : []),
    ];
    for (const [path, action] of mapped) {
      if (!own(config.actions, action)) {
        issues.push({ path: `tenants.${index}.${path}`, message: `action "${action}" is not enabled under actions` });
      }
    }
  });
  const offered: Record<string, boolean> = {
    list: true,
    detail: pack.detail !== undefined,
    export: pack.export !== undefined,
    api: pack.api !== undefined,
  };
  policy.readback_sources.forEach((name, index) => {
    if (!offered[name]) {
      issues.push({
        path: `write_policy.readback_sources.${index}`,
        message: `site pack "${pack.site}" has no ${name} source; describe it in the pack or drop it here (the pack offers: ${Object.keys(
          offered,
        )
          .filter((k) => offered[k])
          .join(', ')})`,
      });
    }
  });
  policy.approval_required.forEach((name, index) => {
    if (!own(pack.actions, name)) {
      issues.push({ path: `write_policy.approval_required.${index}`, message: `site pack "${pack.site}" has no action "${name}"` });
    }
  });
  config.approvals.sign_in?.required_for.actions.forEach((name, index) => {
    if (!own(pack.actions, name)) {
      issues.push({ path: `approvals.sign_in.required_for.actions.${index}`, message: `site pack "${pack.site}" has no action "${name}"` });
    }
  });
  config.tenants.forEach((tenant, index) => {
    for (const [name, params] of Object.entries(tenant.action_params)) {
      const action = own(pack.actions, name);
      if (!action) {
        issues.push({ path: `tenants.${index}.action_params.${name}`, message: `site pack "${pack.site}" has no action "${name}"` });
        continue;
      }
      for (const param of Object.keys(params)) {
        if (!own(action.params, param)) {
          issues.push({
            path: `tenants.${index}.action_params.${name}.${param}`,
            message: `action "${name}" takes no parameter "${param}" (it takes: ${Object.keys(action.params).join(', ') || 'none'})`,
          });
        }
      }
    }
  });
  issues.push(...writeBudgetIssues(config, pack));
  if (issues.length > 0) throw new ValidationError(source, issues);
}

/**
 * Every enabled browser action must finish inside the deployed browser-write function's timeout with the waits this
 * config and pack declare: the slot wait (`vendor_sessions.wait_seconds`) and the undo window sat out after each stage
 * (`undoWindowSeconds`). The timeout is sized for the declared maxima (src/contracts/sizing.ts); config is read at run
 * time, so a combination that cannot fit is refused here, before anything runs, rather than found as a timed-out write.
 */
function writeBudgetIssues(config: PaperclipConfig, pack: SitePack): Array<{ path: string; message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  const slotWaitSeconds = config.vendor_sessions.wait_seconds;
  for (const [name, action] of Object.entries(pack.actions)) {
    if (!own(config.actions, name) || !action.tiers.browser) continue;
    const stages = stagesOf(action.tiers.browser).length;
    const undoWindowSeconds = action.undoWindowSeconds ?? 0;
    const budget = browserStepBudget('browser-write', { slotWaitSeconds, undoWindowSeconds, stages });
    if (budget.fits) continue;
    const spare = budget.timeoutSeconds - budget.otherSeconds;
    const undoSpent = budget.needSeconds - budget.otherSeconds - slotWaitSeconds;
    const fixes = [`lower vendor_sessions.wait_seconds to at most ${Math.max(0, Math.floor(spare - undoSpent))}`];
    if (undoWindowSeconds > 0) {
      const perStage = Math.floor((spare - slotWaitSeconds) / stages) - 1;
      fixes.push(
        perStage >= 0
          ? `lower the site pack's actions.${name}.undoWindowSeconds to at most ${perStage}`
          : `give actions.${name} fewer stages`,
      );
    }
    issues.push({
      path: 'vendor_sessions.wait_seconds',
      message:
        `action "${name}" of site pack "${pack.site}" cannot finish inside the browser-write function's ${budget.timeoutSeconds} s timeout: ` +
        `the slot wait ${slotWaitSeconds} s + ${stages} stage(s) × undoWindowSeconds ${undoWindowSeconds} s (+1 s each) + ` +
        `${Math.ceil(budget.otherSeconds)} s for the rest of the write need ${Math.ceil(budget.needSeconds)} s; ${fixes.join(', or ')}`,
    });
  }
  return issues;
}

export function loadRuntime(configPath: string, overrides: { vendorBaseUrl?: string } = {}): Runtime {
  const config = loadConfig(configPath);
  if (overrides.vendorBaseUrl) config.vendor.base_url = overrides.vendorBaseUrl;
  const packPath = isAbsolute(config.vendor.site_pack) ? config.vendor.site_pack : resolve(process.cwd(), config.vendor.site_pack);
  const sitePack = loadSitePack(packPath);
  checkConfigAgainstPack(config, sitePack, configPath);
  return { config, sitePack };
}
