import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement, type IGrantable, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectLockRetention, ObjectOwnership, StorageClass } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { grantKeyViaS3 } from './key-via-s3.js';

/** Evidence keys are `evidence/<tenant>/<taskId>/<idempotencyKey>/<file>`. */
export const EVIDENCE_PREFIX = 'evidence/';
/** Seal anchors (src/evidence/anchors.ts); locked like every object of the bucket. */
export const ANCHOR_PREFIX = 'anchors/';
/** The signed daily digests of the anchors (src/evidence/digests.ts), written by the digest function alone. */
export const DIGEST_PREFIX = 'digests/';

/**
 * Traces are the one evidence file that records typed values (form fields,
 * sometimes a password typed at login). Matching `*trace.zip` anywhere covers
 * `.../trace.zip` and any `<step>-trace.zip` naming the writers may choose.
 */
export const TRACE_OBJECT_PATTERN = '*trace.zip';

export interface EvidenceBucketProps {
  prefix: string;
  bucketName: string;
  retentionDays: number;
  objectLockMode: 'COMPLIANCE' | 'GOVERNANCE';
  glacierAfterDays: number;
  accessLogRetentionDays: number;
  auditor: IRole;
}

/**
 * Screenshots, traces and readback records for every write attempt. Write-once
 * for the functions, read-only for the auditor, immutable for everyone for the
 * retention period.
 */
export class EvidenceBucket extends Construct {
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;
  readonly key: Key;

  constructor(scope: Construct, id: string, props: EvidenceBucketProps) {
    super(scope, id);
    const region = Stack.of(this).region;

    this.key = new Key(this, 'Key', {
      alias: `alias/${props.prefix}-evidence`,
      description: 'Encrypts Paperclip evidence (screenshots, traces, readback records)',
      enableKeyRotation: true,
      // Deleting the key would make every locked evidence object unreadable: keep it with the data.
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
    });
    // Stated in the key policy itself, not only in the role's IAM policy, so the
    // auditor keeps decrypt access even if the account's IAM delegation changes.
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AuditorDecryptsEvidenceThroughS3',
        principals: [props.auditor],
        actions: ['kms:Decrypt', 'kms:DescribeKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${region}.amazonaws.com` } },
      }),
    );

    // Object Lock buckets cannot receive server access logs, so the logs live apart.
    // SSE-S3 because S3 log delivery cannot write to SSE-KMS target buckets.
    this.accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [
        {
          id: 'expire-access-logs',
          expiration: Duration.days(props.accessLogRetentionDays),
          noncurrentVersionExpiration: Duration.days(30),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const retention =
      props.objectLockMode === 'COMPLIANCE'
        ? ObjectLockRetention.compliance(Duration.days(props.retentionDays))
        : ObjectLockRetention.governance(Duration.days(props.retentionDays));

    this.bucket = new Bucket(this, 'Bucket', {
      bucketName: props.bucketName,
      versioned: true,
      objectLockEnabled: true,
      objectLockDefaultRetention: retention,
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      // One data key per bucket instead of per object: fewer KMS calls, same key policy.
      bucketKeyEnabled: true,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'evidence-bucket/',
      lifecycleRules: [
        {
          id: 'evidence-to-glacier-ir',
          // Instant Retrieval: an auditor opening an old screenshot still gets it in milliseconds.
          transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(props.glacierAfterDays) }],
          // Evidence is written once per key; a noncurrent version only exists if something overwrote
          // a key, and Object Lock keeps that original until its own retention ends.
          noncurrentVersionExpiration: Duration.days(props.retentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(7),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheAuditorReadsTraces',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bucket.arnForObjects(TRACE_OBJECT_PATTERN)],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': props.auditor.roleArn } },
      }),
    );

    this.grantAuditRead(props.auditor);
  }

  /** PutObject under evidence/ only: no read-back, no delete, no retention or legal-hold changes. */
  grantWriteEvidence(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteEvidence',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${EVIDENCE_PREFIX}*`)],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'EncryptEvidence',
        // Decrypt is needed by multipart uploads (large traces); it reads nothing without s3:GetObject.
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }

  /** The approval page shows the pre-state screenshot, and nothing else from the bucket. */
  grantReadBeforeScreenshots(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadBeforeScreenshots',
        actions: ['s3:GetObject'],
        resources: [this.bucket.arnForObjects(`${EVIDENCE_PREFIX}*/before.png`)],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DecryptBeforeScreenshots',
        actions: ['kms:Decrypt'],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }

  /**
   * List and read under evidence/, for the functions that build evidence pages
   * and seals. GetObjectAttributes returns an object's stored SHA-256 checksum
   * without its bytes, which is how a seal can cover traces this role may not read.
   */
  grantReadEvidenceFolders(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ListEvidenceFolders',
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${EVIDENCE_PREFIX}*`] } },
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadEvidenceFolders',
        actions: ['s3:GetObject', 's3:GetObjectAttributes'],
        resources: [this.bucket.arnForObjects(`${EVIDENCE_PREFIX}*`)],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DecryptEvidenceFolders',
        actions: ['kms:Decrypt'],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }

  /**
   * The sealing functions anchor each seal under anchors/: put only. They neither read anchors nor touch
   * digests (the digest function's), and with Object Lock and the bucket's default retention the first
   * version of each anchor stays.
   */
  grantWriteAnchors(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteAnchors',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${ANCHOR_PREFIX}*`)],
      }),
    );
    this.grantKey(grantee, 'AnchorsUseEvidenceKey', ['kms:GenerateDataKey']);
  }

  /**
   * The digest function: lists and reads the anchors of each day and the previous digest, and puts the
   * day's digest under digests/. No delete, no put under anchors/ or evidence/.
   */
  grantWriteDigests(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ListAnchorsAndDigests',
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${ANCHOR_PREFIX}*`, `${DIGEST_PREFIX}*`] } },
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadAnchorsAndDigests',
        actions: ['s3:GetObject'],
        resources: [this.bucket.arnForObjects(`${ANCHOR_PREFIX}*`), this.bucket.arnForObjects(`${DIGEST_PREFIX}*`)],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteDigests',
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${DIGEST_PREFIX}*`)],
      }),
    );
    this.grantKey(grantee, 'DigestsUseEvidenceKey', ['kms:GenerateDataKey', 'kms:Decrypt']);
  }

  private grantKey(grantee: IGrantable, sid: string, actions: string[]): void {
    grantKeyViaS3(this.key, grantee, sid, actions);
  }

  private grantAuditRead(auditor: IRole): void {
    auditor.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ListEvidence',
        actions: ['s3:ListBucket', 's3:ListBucketVersions', 's3:GetBucketObjectLockConfiguration'],
        resources: [this.bucket.bucketArn],
      }),
    );
    auditor.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadEvidence',
        actions: ['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectAttributes', 's3:GetObjectRetention', 's3:GetObjectLegalHold'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    auditor.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DecryptEvidence',
        actions: ['kms:Decrypt', 'kms:DescribeKey'],
        resources: [this.key.keyArn],
      }),
    );
  }
}
