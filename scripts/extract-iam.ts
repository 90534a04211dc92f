/**
 * Writes twin/aws/iam/deployed-iam.json: the IAM the CDK app deploys (each role's policies, which
 * function runs as which role, the bucket policies), resolved to local names, which the local stack
 * enforces on every call. Run after changing anything in cdk/ that touches IAM:
 *
 *     npx tsx scripts/extract-iam.ts
 *
 * test/twin/aws/iam/extract.test.ts synthesizes the stack and fails when the committed file differs.
 * Synthesizing with bundling takes about 35 s here (esbuild for twelve handlers); the IAM does not
 * depend on the bundles, so this synthesizes without them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadDeploymentConfig } from '../cdk/config.js';
import { createPaperclipApp, SAMPLE_DEPLOY_CONFIG } from '../cdk/lib/app.js';
import { DEPLOYED_IAM_PATH } from '../twin/aws/iam/policies.js';
import { extractIam, type IamExtract } from '../twin/aws/iam/template.js';

export async function synthesizedIam(): Promise<IamExtract> {
  const outdir = mkdtempSync(join(tmpdir(), 'paperclip-iam-'));
  try {
    const deploy = loadDeploymentConfig(SAMPLE_DEPLOY_CONFIG);
    const { app, stack } = createPaperclipApp({ deployConfigPath: SAMPLE_DEPLOY_CONFIG, outdir, bundling: false });
    const template = app.synth().getStackArtifact(stack.artifactId).template as Parameters<typeof extractIam>[0];
    return extractIam(template, {
      prefix: deploy.prefix,
      bucketName: deploy.evidence.bucketName,
      senderAddress: deploy.email.senderAddress,
    });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  const extract = await synthesizedIam();
  writeFileSync(DEPLOYED_IAM_PATH, `${JSON.stringify(extract, null, 2)}\n`);
  process.stderr.write(`wrote ${DEPLOYED_IAM_PATH} in ${Date.now() - started} ms\n`);
}
