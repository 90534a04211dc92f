import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Services } from '../app/services.js';
import { createServices, type WiredServices } from '../composition/services.js';
import { loadConfig } from '../config/load.js';
import { workingBucketName } from '../config/schema.js';
import { digestKeyAlias } from '../contracts/functions.js';
import { configForFolder, DataFolderError, runningStack } from './data-folder.js';
import { RefusedError } from './args.js';

const DEFAULT_CONFIG = 'config/paperclip.local.yaml';

/**
 * Where the read-only commands (audit verify, report, evidence) read from:
 *   1. PAPERCLIP_DYNAMODB_ENDPOINT / PAPERCLIP_S3_ENDPOINT, or --aws: those
 *      endpoints, or AWS itself with the usual credential chain;
 *   2. a local data folder held by a running stack (npm start -- --keep):
 *      that stack's endpoints, from <dataDir>/stack.json (see data-folder.ts);
 *   3. a local data folder nobody holds: DynamoDB and S3 started here on it,
 *      read-only use, stopped on close.
 * dynalite locks its LevelDB folder, so case 2 must not open the folder itself.
 */

export class DataSourceError extends RefusedError {
  override name = 'DataSourceError';
}

export interface DataSource {
  services: WiredServices;
  /** The s3rver folder of the evidence bucket, when reading a local data folder. */
  bucketDir?: string;
  describe: string;
  close(): Promise<void>;
}

function destroyClients(services: Services): void {
  services.close();
}

export interface DataSourceOptions {
  dataDir: string;
  /** Left out: the config the data folder was run with (data-folder.ts), else the local sample. */
  configPath?: string | undefined;
  /** Read AWS itself (credentials from the environment) instead of a local folder. */
  aws?: boolean;
  /**
   * Sign digests (`audit digest`): on a local folder, the services carry the local KMS's signer credential and
   * the folder's digest key is created if it has none yet. Otherwise the key is only read (verify).
   */
  signer?: boolean;
  env?: NodeJS.ProcessEnv;
}

export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const env = options.env ?? process.env;
  if (options.aws || env['PAPERCLIP_DYNAMODB_ENDPOINT'] || env['PAPERCLIP_S3_ENDPOINT']) {
    const services = createServices({ ...env, PAPERCLIP_CONFIG: resolve(options.configPath ?? DEFAULT_CONFIG) });
    const where = env['PAPERCLIP_DYNAMODB_ENDPOINT']
      ? `endpoints ${env['PAPERCLIP_DYNAMODB_ENDPOINT']} / ${env['PAPERCLIP_S3_ENDPOINT'] ?? 'AWS S3'}`
      : `AWS (${services.config.region})`;
    return { services, describe: where, close: async () => destroyClients(services) };
  }
  const dataDir = resolve(options.dataDir);
  if (!existsSync(dataDir)) {
    throw new DataSourceError(
      `there is no data folder at ${dataDir}; run npm start first, pass --data-dir, or set PAPERCLIP_DYNAMODB_ENDPOINT and PAPERCLIP_S3_ENDPOINT`,
    );
  }
  let configPath: string;
  try {
    configPath = configForFolder(dataDir, options.configPath, DEFAULT_CONFIG);
  } catch (error) {
    if (error instanceof DataFolderError) throw new DataSourceError(error.message);
    throw error;
  }
  const owner = runningStack(dataDir);
  // The local emulators are loaded only to open a data folder: a command reading through endpoints never needs them.
  const { awsClientConfig, createTables, localKmsSigner, startLocalDynamoDb, startLocalKms, startLocalS3 } = await import(
    '../../twin/aws/index.js'
  );
  if (owner) {
    const signer = options.signer ? localKmsSigner(join(dataDir, 'kms')) : undefined;
    const services = createServices({
      PAPERCLIP_CONFIG: resolve(owner.configPath),
      PAPERCLIP_AWS_REGION: owner.region,
      PAPERCLIP_DYNAMODB_ENDPOINT: owner.endpoints.dynamodb,
      PAPERCLIP_S3_ENDPOINT: owner.endpoints.s3,
      ...(owner.endpoints.kms ? { PAPERCLIP_KMS_ENDPOINT: owner.endpoints.kms } : {}),
      ...(signer ? { PAPERCLIP_KMS_SIGNER: `${signer.accessKeyId}:${signer.secretAccessKey}` } : {}),
    });
    return {
      services,
      bucketDir: join(dataDir, 's3', services.config.evidence.bucket),
      describe: `${dataDir} (through the running stack, pid ${owner.pid})`,
      close: async () => destroyClients(services),
    };
  }
  const config = loadConfig(configPath);
  const dynamodb = await startLocalDynamoDb({ path: join(dataDir, 'dynamodb') });
  const s3 = await startLocalS3({
    directory: join(dataDir, 's3'),
    buckets: [workingBucketName(config.evidence)],
    lockedBuckets: [{ name: config.evidence.bucket, defaultRetention: { mode: 'COMPLIANCE', days: config.evidence.retention_days } }],
  }).catch(async (error: unknown) => {
    await dynamodb.stop();
    throw error;
  });
  // The folder's digest key: read where it exists (verify creates none), created for a writer.
  const kmsDir = join(dataDir, 'kms');
  const kms = await startLocalKms({
    directory: kmsDir,
    aliases: options.signer || existsSync(join(kmsDir, 'keys.json')) ? [digestKeyAlias(config.prefix)] : [],
    region: config.region,
    accountId: '000000000000',
  }).catch(async (error: unknown) => {
    await Promise.allSettled([s3.stop(), dynamodb.stop()]);
    throw error;
  });
  try {
    const client = new DynamoDBClient(awsClientConfig(dynamodb.endpoint, config.region));
    try {
      await createTables(client, config.prefix);
    } finally {
      client.destroy();
    }
  } catch (error) {
    await Promise.allSettled([s3.stop(), dynamodb.stop(), kms.stop()]);
    throw error;
  }
  const services = createServices({
    PAPERCLIP_CONFIG: configPath,
    PAPERCLIP_DYNAMODB_ENDPOINT: dynamodb.endpoint,
    PAPERCLIP_S3_ENDPOINT: s3.endpoint,
    PAPERCLIP_KMS_ENDPOINT: kms.endpoint,
    ...(options.signer ? { PAPERCLIP_KMS_SIGNER: `${kms.signer.accessKeyId}:${kms.signer.secretAccessKey}` } : {}),
  });
  return {
    services,
    bucketDir: join(dataDir, 's3', config.evidence.bucket),
    describe: dataDir,
    async close() {
      destroyClients(services);
      await kms.stop();
      await s3.stop();
      await dynamodb.stop();
    },
  };
}
