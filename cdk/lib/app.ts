import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { CURRENTLY_RECOMMENDED_FLAGS } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadDeploymentConfig } from '../config.js';
import type { FunctionName } from './function-access.js';
import { PaperclipStack } from './paperclip-stack.js';
import { resolveDeployment } from './runtime-config.js';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SAMPLE_DEPLOY_CONFIG = resolve(PROJECT_ROOT, 'cdk', 'deploy-config.sample.json');

export interface PaperclipAppOptions {
  deployConfigPath: string;
  outdir?: string;
  entryFor?: (name: FunctionName) => string;
  definitionPath?: (file: string) => string;
  /**
   * false: no handler is bundled (CDK's `aws:cdk:bundling-stacks` context left empty), for reading the template's
   * IAM in seconds (twin/aws/iam/template.ts); asset hashes differ, nothing else does.
   */
  bundling?: boolean;
}

/**
 * The app with today's recommended feature flags (what `cdk init` would write
 * into cdk.json), so `tsx cdk/bin/app.ts`, `cdk synth` and the tests all
 * synthesize the same template, and cdk-nag's AwsSolutions checks attached.
 */
export function createPaperclipApp(options: PaperclipAppOptions): { app: App; stack: PaperclipStack } {
  const deploy = loadDeploymentConfig(options.deployConfigPath);
  const deployment = resolveDeployment(deploy, PROJECT_ROOT, options.deployConfigPath);
  const context: Record<string, unknown> = { ...CURRENTLY_RECOMMENDED_FLAGS };
  if (options.bundling === false) context['aws:cdk:bundling-stacks'] = [];
  const app = new App({ outdir: options.outdir, context });
  const stack = new PaperclipStack(app, `Paperclip-${deploy.prefix}`, {
    env: deploy.account || deploy.region ? { account: deploy.account, region: deploy.region } : undefined,
    description: 'Paperclip: guarded, auditable writes on vendor web back offices',
    deployment,
    projectRoot: PROJECT_ROOT,
    entryFor: options.entryFor,
    definitionPath: options.definitionPath,
  });
  // cdk-nag 3 runs as a policy-validation plugin: a finding nobody acknowledged fails the synth.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
