import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { grantKeyViaS3 } from './key-via-s3.js';

/**
 * A batch execution's working files (src/app/batch.ts runFolder): the item list
 * ReadList writes and the Distributed Map reads, and the map run's results the
 * ResultWriter writes and Summarize reads. Not evidence: never sealed, so they
 * live apart from the evidence bucket, whose Object Lock would keep each of them
 * for the whole retention period (and whose PUTs must carry a checksum, which
 * Step Functions' ResultWriter is not documented to send).
 */
export const RUNS_PREFIX = 'runs/';
export const BATCH_ITEMS_OBJECTS = `${RUNS_PREFIX}*/items.json`;
export const MAP_RUN_RESULT_OBJECTS = `${RUNS_PREFIX}*/results/*`;

export interface WorkingBucketProps {
  bucketName: string;
  /** The evidence key: item lists name bills and amounts, so they are encrypted like the evidence. */
  key: IKey;
  accessLogs: IBucket;
  /** Working files are deleted this long after they were written. */
  expireAfterDays: number;
}

/** Unversioned, not locked, encrypted with the evidence key, and emptied by a lifecycle rule. */
export class WorkingBucket extends Construct {
  readonly bucket: Bucket;
  private readonly key: IKey;

  constructor(scope: Construct, id: string, props: WorkingBucketProps) {
    super(scope, id);
    this.key = props.key;
    this.bucket = new Bucket(this, 'Bucket', {
      bucketName: props.bucketName,
      encryption: BucketEncryption.KMS,
      encryptionKey: props.key,
      bucketKeyEnabled: true,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'working-bucket/',
      lifecycleRules: [
        {
          id: 'expire-working-files',
          expiration: Duration.days(props.expireAfterDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      // Kept like the evidence bucket: deleting a non-empty bucket would fail the stack deletion.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** ReadList: writes a batch's item list, nothing else under runs/. */
  grantWriteBatchItems(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteBatchItems',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(BATCH_ITEMS_OBJECTS)],
      }),
    );
    this.grantKey(grantee, 'EncryptBatchItems', ['kms:GenerateDataKey']);
  }

  /** Summarize: reads the map run's manifest and result files. */
  grantReadMapRunResults(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadMapRunResults',
        actions: ['s3:GetObject'],
        resources: [this.bucket.arnForObjects(MAP_RUN_RESULT_OBJECTS)],
      }),
    );
    // A failed map run's Catch output names no map run; its manifest is found by listing the results folder.
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ListMapRunResults',
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [MAP_RUN_RESULT_OBJECTS] } },
      }),
    );
    this.grantKey(grantee, 'DecryptMapRunResults', ['kms:Decrypt']);
  }

  /** The batch workflow's Distributed Map: ItemReader reads the item list, ResultWriter writes the results (multipart for large ones). */
  grantMapRun(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'MapRunReadsItems',
        actions: ['s3:GetObject'],
        resources: [this.bucket.arnForObjects(BATCH_ITEMS_OBJECTS)],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'MapRunWritesResults',
        actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
        resources: [this.bucket.arnForObjects(MAP_RUN_RESULT_OBJECTS)],
      }),
    );
    this.grantKey(grantee, 'MapRunUsesEvidenceKey', ['kms:GenerateDataKey', 'kms:Decrypt']);
  }

  private grantKey(grantee: IGrantable, sid: string, actions: string[]): void {
    grantKeyViaS3(this.key, grantee, sid, actions);
  }
}
