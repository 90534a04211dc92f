import { isAbsolute, resolve } from 'node:path';
import type { PaperclipConfig } from './schema.js';
import type { SitePack } from '../sitepack/schema.js';
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
  if (issues.length > 0) throw new ValidationError(source, issues);
}

export function loadRuntime(configPath: string, overrides: { vendorBaseUrl?: string } = {}): Runtime {
  const config = loadConfig(configPath);
  if (overrides.vendorBaseUrl) config.vendor.base_url = overrides.vendorBaseUrl;
  const packPath = isAbsolute(config.vendor.site_pack) ? config.vendor.site_pack : resolve(process.cwd(), config.vendor.site_pack);
  const sitePack = loadSitePack(packPath);
  checkConfigAgainstPack(config, sitePack, configPath);
  return { config, sitePack };
}
