import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';

/**
 * Lets `grantee` use a bucket's KMS key only through S3 in this region: the evidence and working
 * buckets share one key, and no function needs it outside an S3 request.
 */
export function grantKeyViaS3(key: IKey, grantee: IGrantable, sid: string, actions: string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      sid,
      actions,
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(key).region}.amazonaws.com` } },
    }),
  );
}
