import { join } from 'node:path';
import { createPaperclipApp, PROJECT_ROOT, SAMPLE_DEPLOY_CONFIG } from '../lib/app.js';

/**
 * `npm run synth` / `cdk synth`. The deployment config comes from
 * PAPERCLIP_DEPLOY_CONFIG; without it the sample is used, which synthesizes
 * but names example.com addresses. Output goes to cdk.out/ (or CDK_OUTDIR,
 * which the CDK CLI sets).
 */
const deployConfigPath = process.env['PAPERCLIP_DEPLOY_CONFIG'] ?? SAMPLE_DEPLOY_CONFIG;
if (!process.env['PAPERCLIP_DEPLOY_CONFIG']) {
  process.stderr.write(`PAPERCLIP_DEPLOY_CONFIG is not set; synthesizing ${deployConfigPath}\n`);
}
try {
  const { app } = createPaperclipApp({ deployConfigPath, outdir: process.env['CDK_OUTDIR'] ?? join(PROJECT_ROOT, 'cdk.out') });
  app.synth();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}
