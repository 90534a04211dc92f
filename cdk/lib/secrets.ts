import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { identitySecretName } from '../../src/contracts/tenant-policy.js';

/** Physical name of an identity's secret; the tenant session policy derives the same name. */
export { identitySecretName };

export function approvalSigningSecretName(prefix: string): string {
  return `${prefix}/approval-signing-key`;
}

export function requesterAttestationSecretName(prefix: string): string {
  return `${prefix}/requester-attestation-key`;
}

/**
 * One secret per service identity (never a shared vendor account) and the HMAC
 * key for approval links. The identity secrets are created empty of real
 * credentials: operators put the vendor login with put-secret-value, so no
 * password ever passes through a template or a deploy log.
 */
export class PaperclipSecrets extends Construct {
  readonly identities: ReadonlyMap<string, Secret>;
  readonly approvalSigningKey: Secret;
  /** HMAC key with which entry points attest who asked for a write; routing checks it (docs/approvals.md). */
  readonly requesterAttestationKey: Secret;

  constructor(scope: Construct, id: string, props: { prefix: string; identityIds: readonly string[] }) {
    super(scope, id);
    const identities = new Map<string, Secret>();
    for (const identityId of props.identityIds) {
      identities.set(
        identityId,
        new Secret(this, `Identity-${identityId}`, {
          secretName: identitySecretName(props.prefix, identityId),
          description: `Vendor back-office login of service identity ${identityId}; set with put-secret-value`,
          generateSecretString: {
            // A recognisable placeholder: a handler that reads it fails with "not configured".
            secretStringTemplate: JSON.stringify({ identity: identityId, configured: false }),
            generateStringKey: 'placeholder',
          },
        }),
      );
    }
    this.identities = identities;
    this.approvalSigningKey = new Secret(this, 'ApprovalSigningKey', {
      secretName: approvalSigningSecretName(props.prefix),
      description: 'HMAC-SHA256 key that signs approval links',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    this.requesterAttestationKey = new Secret(this, 'RequesterAttestationKey', {
      secretName: requesterAttestationSecretName(props.prefix),
      description: 'HMAC-SHA256 key with which entry points attest who asked for a write',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
  }
}
