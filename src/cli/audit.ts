import { z } from 'zod';
import { KEY_PATTERN, KEY_SHAPE } from '../domain/task.js';
import { DataSourceError, openDataSource } from './data-source.js';
import type { VerifyResult } from '../evidence/verify.js';
import { verifyPreserved } from '../evidence/preserved-versions.js';
import { writeDailyDigests } from '../app/digests.js';
import { parseCommand, TenantId, type Command, type CommandSpec, dataFolderFlags, AwsFlag } from './args.js';

const Flags = z
  .object({
    batch: z
      .string()
      .regex(/^[a-z][a-z0-9-]{1,40}\/T-[A-Za-z0-9-]{1,60}$/, 'write the batch as <tenant>/<taskId>, e.g. acme/T-20261202-acme')
      .optional()
      .meta({ value: 'tenant/taskId', description: 'verify one batch' }),
    key: z
      .string()
      .regex(KEY_PATTERN, `an idempotency key: ${KEY_SHAPE}`)
      .optional()
      .meta({ value: 'key', description: "verify one item's chain" }),
    tenant: TenantId.optional().meta({ value: 'tenant', description: 'without --batch/--key: every batch of this tenant' }),
    json: z.boolean().default(false).meta({ description: 'print the result as JSON' }),
    ...dataFolderFlags,
    aws: AwsFlag,
  })
  .refine((f) => [f.batch, f.key].filter(Boolean).length <= 1, { message: 'pass either --batch or --key, not both', path: ['key'] });

export const AUDIT_SPEC: CommandSpec<typeof Flags> = {
  name: 'audit verify',
  summary: 'recomputes audit chains and evidence hashes against the batch seals',
  description: `Recomputes every audit chain (per idempotency key, and the batch chain
batch:<tenant>:<taskId>) and the sha256 of every evidence object, and compares
them with the batch seal. Names each event that was altered or removed, each
object that was altered or removed, and each object the seal does not account
for. Without --batch/--key: every batch (of --tenant), every audit chain no
batch leads to (named in a note: no seal covers it), and each tenant's signed
daily digests: one for every day from its first seal, each signature checked
with the digest key's public half (KMS, or evidence.digest_public_key).

Reads the local data folder (also while npm start -- --keep runs on it), the
endpoints in PAPERCLIP_DYNAMODB_ENDPOINT / PAPERCLIP_S3_ENDPOINT, or AWS (--aws).
Exit code: 0 clean, 1 findings, 2 bad arguments, no data folder or a folder
of another config (nothing read), 4 a store that does not answer.`,
  flags: Flags,
};

export function formatVerifyResult(result: VerifyResult): string {
  const lines = [`audit verify: ${result.scope}`];
  for (const finding of result.findings) lines.push(`  ${finding.kind.toUpperCase().padEnd(8)} ${finding.detail}`);
  for (const note of result.notes) lines.push(`  note     ${note}`);
  const { batches, chains, events, objects } = result.checked;
  lines.push(
    result.findings.length === 0
      ? `clean: ${batches} batch(es), ${chains} chain(s), ${events} event(s), ${objects} object(s) verified`
      : `${result.findings.length} finding(s) in ${batches} batch(es), ${chains} chain(s), ${events} event(s), ${objects} object(s)`,
  );
  return lines.join('\n');
}

export async function runAudit(argv: string[]): Promise<number> {
  const { flags } = parseCommand(AUDIT_SPEC, argv);
  let source: Awaited<ReturnType<typeof openDataSource>>;
  try {
    source = await openDataSource({ dataDir: flags['data-dir'], configPath: flags.config, aws: flags.aws });
  } catch (error) {
    if (!(error instanceof DataSourceError)) throw error;
    process.stderr.write(`paperclip audit verify: ${error.message}\n`);
    return 2;
  }
  try {
    const ctx = source.services;
    let result: VerifyResult;
    // What Object Lock preserves: versions and delete markers, not only what a plain read sees now.
    if (flags.key) result = await verifyPreserved(ctx, { kind: 'key', key: flags.key });
    else if (flags.batch) {
      const [tenant, taskId] = flags.batch.split('/') as [string, string];
      result = await verifyPreserved(ctx, { kind: 'batch', batch: { tenant, taskId } });
    } else result = await verifyPreserved(ctx, { kind: 'all', ...(flags.tenant ? { tenant: flags.tenant } : {}) });
    process.stdout.write(flags.json ? `${JSON.stringify(result)}\n` : `${formatVerifyResult(result)}\n`);
    return result.findings.length === 0 ? 0 : 1;
  } finally {
    await source.close();
  }
}

export const auditCommand: Command = { spec: AUDIT_SPEC, run: runAudit };

const DigestFlags = z.object({
  ...dataFolderFlags,
  json: z.boolean().default(false).meta({ description: 'print the run as JSON' }),
});

export const AUDIT_DIGEST_SPEC: CommandSpec<typeof DigestFlags> = {
  name: 'audit digest',
  summary: 'writes the signed daily digest of every finished day that has none (the digest function, locally)',
  description: `Runs the digest function on a local data folder: for every tenant that has sealed
anything, the daily digest of each day that is over (an hour after midnight UTC)
and has none yet, quiet days included, each naming the previous day's digest and
signed with the folder's digest key (its local KMS). On AWS an EventBridge rule
runs the function every hour; locally the stack runs it at start and after each
batch, and this command on demand. Never replaces a digest that exists.

Exit code: 0 written (or nothing to write), 1 a tenant's digests could not be
written, 2 bad arguments.`,
  flags: DigestFlags,
};

export async function runAuditDigest(argv: string[]): Promise<number> {
  const { flags } = parseCommand(AUDIT_DIGEST_SPEC, argv);
  let source: Awaited<ReturnType<typeof openDataSource>>;
  try {
    source = await openDataSource({ dataDir: flags['data-dir'], configPath: flags.config, signer: true });
  } catch (error) {
    if (!(error instanceof DataSourceError)) throw error;
    process.stderr.write(`paperclip audit digest: ${error.message}\n`);
    return 2;
  }
  try {
    const run = await writeDailyDigests(source.services);
    if (flags.json) process.stdout.write(`${JSON.stringify(run)}\n`);
    else {
      const lines = [`audit digest: ${run.tenants} tenant(s), ${run.written.length} digest(s) written`];
      for (const key of run.written) lines.push(`  wrote    ${key}`);
      for (const f of run.failed) lines.push(`  FAILED   ${f.tenant}: ${f.error}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return run.failed.length === 0 ? 0 : 1;
  } finally {
    await source.close();
  }
}

export const auditDigestCommand: Command = { spec: AUDIT_DIGEST_SPEC, run: runAuditDigest };
