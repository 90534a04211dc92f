import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { ValidationError, parseOrThrow } from '../../src/config/errors.js';
import { checkConfigAgainstPack } from '../../src/config/runtime.js';
import { PaperclipConfig, workingBucketName } from '../../src/config/schema.js';
import { loadSitePack } from '../../src/sitepack/load.js';
import type { SitePack } from '../../src/sitepack/schema.js';
import { DeploymentConfigError, type DeploymentConfig } from '../config.js';
import { approvalSigningSecretName, identitySecretName, requesterAttestationSecretName } from './secrets.js';

/**
 * The handlers read their configuration from a YAML file (PAPERCLIP_CONFIG)
 * and the site pack it names. On AWS both travel inside every function's
 * bundle, under /var/task/paperclip/. The operator's YAML supplies the policy
 * (identities and their tenants, approvers, actions, write policy); the
 * deployment supplies the facts only it knows (prefix, bucket, sender, vendor
 * URL) and swaps every credential for the Secrets Manager secret it created,
 * so no password from a local config can ride along into a bundle.
 */

export const RUNTIME_DIR_IN_BUNDLE = 'paperclip';
export const CONFIG_PATH_IN_LAMBDA = `/var/task/${RUNTIME_DIR_IN_BUNDLE}/config.yaml`;
export const SITE_PACK_PATH_IN_LAMBDA = `/var/task/${RUNTIME_DIR_IN_BUNDLE}/site-pack.yaml`;

/**
 * approvals.base_url must be a URL when the config is parsed, but the Function
 * URL only exists after deploy: the real one reaches request-approval as
 * PAPERCLIP_APPROVAL_BASE_URL. This placeholder can never be delivered to.
 */
export const APPROVAL_URL_PLACEHOLDER = 'https://approval-url.invalid/';

/**
 * The user pool and its client are created by the stack, so their ids are not
 * known when the config is packaged: they reach the approval function as
 * PAPERCLIP_SIGN_IN_ISSUER and PAPERCLIP_SIGN_IN_CLIENT_ID.
 */
export const SIGN_IN_ISSUER_PLACEHOLDER = 'https://sign-in-issuer.invalid/';
export const SIGN_IN_CLIENT_PLACEHOLDER = 'from-deployment';

export interface ResolvedDeployment {
  deploy: DeploymentConfig;
  /** The operator's YAML, as written. */
  source: PaperclipConfig;
  /** What the functions read on AWS. */
  packaged: PaperclipConfig;
  sitePack: SitePack;
  sitePackPath: string;
}

function relativeTo(root: string, path: string): string {
  return isAbsolute(path) ? path : resolve(root, path);
}

function fromValidation(source: string, field: string, error: unknown): never {
  if (error instanceof ValidationError) {
    throw new DeploymentConfigError(
      source,
      error.issues.map((issue) => `field "${field}": ${error.source}: ${issue.path || '(root)'}: ${issue.message}`),
    );
  }
  throw new DeploymentConfigError(source, [`field "${field}": ${(error as Error).message}`]);
}

export function packagedRuntimeConfig(deploy: DeploymentConfig, source: PaperclipConfig): PaperclipConfig {
  return {
    ...source,
    environment: 'aws',
    prefix: deploy.prefix,
    region: deploy.region ?? source.region,
    vendor: { site_pack: SITE_PACK_PATH_IN_LAMBDA, base_url: deploy.vendorBaseUrl },
    identities: source.identities.map((identity) => ({
      ...identity,
      credentials: { source: 'secrets_manager' as const, secret_id: identitySecretName(deploy.prefix, identity.id) },
    })),
    // The deployed config always traces writes: the trace is evidence.
    evidence: {
      bucket: deploy.evidence.bucketName,
      working_bucket: workingBucketName({ bucket: deploy.evidence.bucketName, working_bucket: deploy.evidence.workingBucketName }),
      retention_days: deploy.evidence.retentionDays,
      write_trace: true,
      readback_picture: source.evidence.readback_picture,
      before_commit_picture: source.evidence.before_commit_picture,
    },
    requesters: {
      ...source.requesters,
      attestation_secret: { source: 'secrets_manager', secret_id: requesterAttestationSecretName(deploy.prefix) },
    },
    approvals: {
      ...source.approvals,
      base_url: deploy.approvalBaseUrl ?? APPROVAL_URL_PLACEHOLDER,
      sender: deploy.email.senderAddress,
      signing_secret: { source: 'secrets_manager', secret_id: approvalSigningSecretName(deploy.prefix) },
      ...(source.approvals.sign_in
        ? {
            sign_in: {
              ...source.approvals.sign_in,
              issuer: SIGN_IN_ISSUER_PLACEHOLDER,
              client_id: SIGN_IN_CLIENT_PLACEHOLDER,
              // The approvers' passwords live in the user pool, never in a bundle.
              embedded_users: [],
            },
          }
        : {}),
    },
  };
}

/** Loads the operator's YAML and site pack, and checks the deployment against them. */
export function resolveDeployment(deploy: DeploymentConfig, projectRoot: string, deploySource = 'deployment config'): ResolvedDeployment {
  const configPath = relativeTo(projectRoot, deploy.runtimeConfig);
  let source: PaperclipConfig;
  try {
    source = loadConfig(configPath);
  } catch (error) {
    fromValidation(deploySource, 'runtimeConfig', error);
  }
  const sitePackPath = relativeTo(projectRoot, source.vendor.site_pack);
  let sitePack: SitePack;
  try {
    sitePack = loadSitePack(sitePackPath);
  } catch (error) {
    fromValidation(deploySource, 'runtimeConfig', error);
  }

  const problems: string[] = [];
  deploy.tenants.forEach((tenant, index) => {
    if (!source.tenants.some((t) => t.id === tenant.id)) {
      problems.push(
        `field "tenants[${index}].id": tenant '${tenant.id}' is not in ${deploy.runtimeConfig}; ` +
          `add it there (with its identity and approvers) or remove the schedule`,
      );
    }
  });
  if (source.approvals.sign_in && !deploy.approvalBaseUrl) {
    problems.push(
      'field "approvalBaseUrl": required when the runtime config has approvals.sign_in ' +
        '(the user pool client must know the callback URL); set the https URL approvers open',
    );
  }
  if (problems.length > 0) throw new DeploymentConfigError(deploySource, problems);

  const packaged = packagedRuntimeConfig(deploy, source);
  try {
    // The same checks the handlers run at start-up, run here so a bad config fails the synth, not the first batch.
    parseOrThrow(PaperclipConfig, packaged, 'packaged runtime config');
    checkConfigAgainstPack(packaged, sitePack, 'packaged runtime config');
  } catch (error) {
    fromValidation(deploySource, 'runtimeConfig', error);
  }
  return { deploy, source, packaged, sitePack, sitePackPath };
}

/**
 * Writes the files every bundle carries into a folder named by their content,
 * so identical inputs give identical bundles (and asset hashes).
 */
export function writeRuntimeFiles(resolved: ResolvedDeployment): string {
  const configYaml = `# Generated by the CDK app from ${resolved.deploy.runtimeConfig}; do not edit.\n${stringify(resolved.packaged)}`;
  const sitePackYaml = readFileSync(resolved.sitePackPath);
  const digest = createHash('sha256').update(configYaml).update(sitePackYaml).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `paperclip-runtime-${digest}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.yaml'), configYaml);
  copyFileSync(resolved.sitePackPath, join(dir, 'site-pack.yaml'));
  return dir;
}
