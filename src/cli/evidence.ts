import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { loadConfig } from '../config/load.js';
import { configForFolder, DataFolderError } from './data-folder.js';
import { S3ApiBucket, S3rverFolderBucket, type BucketReader } from '../evidence/bucket.js';
import { startEvidenceServer, type EvidenceServer } from '../evidence/server.js';
import { parseCommand, Port, type Command, type CommandSpec, dataFolderFlags } from './args.js';

const DEFAULT_PORT = 4300;

const Flags = z.object({
  port: Port.optional().meta({ value: 'port', description: `where to serve (default ${DEFAULT_PORT}, or a free one)` }),
  ...dataFolderFlags,
  's3-endpoint': z.url().optional().meta({ value: 'url', description: 'read through this S3 API instead of the data folder' }),
});

export const EVIDENCE_SPEC: CommandSpec<typeof Flags> = {
  name: 'evidence',
  summary: 'serves the evidence bucket read-only for browsing the evidence pages',
  description: `Serves the evidence bucket read-only on http://127.0.0.1:<port>/ with folder
listings, for browsing the evidence pages during development. By default it
reads the bucket's files in the data folder directly, so it works both while
npm start -- --keep runs and with only the data folder on disk. With
--s3-endpoint (or PAPERCLIP_S3_ENDPOINT) it reads through the S3 API instead.
Ctrl-C to stop.`,
  flags: Flags,
};

export async function runEvidence(argv: string[]): Promise<number> {
  const { flags } = parseCommand(EVIDENCE_SPEC, argv);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(configForFolder(flags['data-dir'], flags.config));
  } catch (error) {
    if (!(error instanceof DataFolderError)) throw error;
    process.stderr.write(`paperclip evidence: ${error.message}\n`);
    return 2;
  }
  const endpoint = flags['s3-endpoint'] ?? process.env['PAPERCLIP_S3_ENDPOINT'];
  let reader: BucketReader;
  if (endpoint) {
    const s3 = new S3Client({
      region: config.region,
      endpoint,
      forcePathStyle: true,
      // s3rver insists on these; a real endpoint would take the usual credential chain instead.
      ...(new URL(endpoint).hostname === '127.0.0.1' || new URL(endpoint).hostname === 'localhost'
        ? { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }
        : {}),
    });
    reader = new S3ApiBucket(s3, config.evidence.bucket);
  } else {
    const bucketDir = join(resolve(flags['data-dir']), 's3', config.evidence.bucket);
    if (!existsSync(bucketDir)) {
      process.stderr.write(
        `paperclip evidence: there is no evidence bucket at ${bucketDir}; run npm start first, or pass --data-dir / --s3-endpoint\n`,
      );
      return 2;
    }
    reader = new S3rverFolderBucket(bucketDir);
  }
  let server: EvidenceServer;
  try {
    server = await startEvidenceServer({ reader, port: flags.port ?? DEFAULT_PORT });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || flags.port !== undefined) throw error;
    server = await startEvidenceServer({ reader, port: 0 });
  }
  process.stderr.write(`evidence bucket    ${reader.describe()}\nbrowse             ${server.url}/evidence/\n(Ctrl-C to stop)\n`);
  await new Promise<void>((done) => {
    process.once('SIGINT', () => done());
    process.once('SIGTERM', () => done());
  });
  await server.stop();
  return 0;
}

export const evidenceCommand: Command = { spec: EVIDENCE_SPEC, run: runEvidence };
