import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { KMSClient } from '@aws-sdk/client-kms';
import { traced } from '../observability/telemetry.js';

/**
 * The AWS SDK clients of one process. Only adapters hold them; the app layer
 * sees the stores built on them (src/composition/services.ts).
 */
export interface AwsClients {
  db: DynamoDBDocumentClient;
  s3: S3Client;
  ses: SESv2Client;
  sfn: SFNClient;
  secretsManager: SecretsManagerClient;
  /** The digest signing key (Sign for the digest function, GetPublicKey for verify). */
  kms: KMSClient;
}

/** Endpoints of emulated services; each one left out is AWS itself. */
export interface AwsEndpoints {
  dynamodb?: string | undefined;
  s3?: string | undefined;
  ses?: string | undefined;
  sfn?: string | undefined;
  secrets?: string | undefined;
  kms?: string | undefined;
}

/** A credential of the local stack's own (the local KMS answers Sign only for the signer's): AWS uses the role's. */
export interface LocalCredential {
  accessKeyId: string;
  secretAccessKey: string;
}

function clientConfig(region: string, endpoint: string | undefined, credentials?: LocalCredential) {
  if (!endpoint) return { region };
  // The local emulators take fixed credentials (s3rver insists on these); they keep the SDK from looking for real ones.
  return {
    region,
    endpoint,
    credentials: credentials ?? { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED' as const,
    responseChecksumValidation: 'WHEN_REQUIRED' as const,
  };
}

/** Every client is traced: one X-Ray subsegment per call on AWS where tracing is on (telemetry.ts). */
export function createAwsClients(region: string, endpoints: AwsEndpoints, kmsCredential?: LocalCredential): AwsClients {
  return {
    db: DynamoDBDocumentClient.from(traced(new DynamoDBClient(clientConfig(region, endpoints.dynamodb))), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    s3: traced(new S3Client(clientConfig(region, endpoints.s3))),
    ses: traced(new SESv2Client(clientConfig(region, endpoints.ses))),
    sfn: traced(new SFNClient(clientConfig(region, endpoints.sfn))),
    secretsManager: traced(new SecretsManagerClient(clientConfig(region, endpoints.secrets))),
    kms: traced(new KMSClient(clientConfig(region, endpoints.kms, kmsCredential))),
  };
}

/** Closes every client's sockets, so a command can exit without waiting for keep-alive timeouts. */
export function destroyAwsClients(clients: AwsClients): void {
  for (const client of [clients.db, clients.s3, clients.ses, clients.sfn, clients.secretsManager, clients.kms]) client.destroy();
}
