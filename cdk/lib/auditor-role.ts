import { AccountRootPrincipal, Role, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/**
 * The one principal allowed to read Playwright traces. Traces record every
 * value typed into the vendor's pages, so operators and functions may write
 * evidence but only an auditor, deliberately assuming this role, reads it back.
 */
export class AuditorRole extends Construct {
  readonly role: Role;

  constructor(scope: Construct, id: string, props: { prefix: string; assumedBy?: IPrincipal }) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      roleName: `${props.prefix}-evidence-auditor`,
      description: 'Reads Paperclip evidence, including Playwright traces (which contain typed values)',
      // The account delegates: only IAM principals it grants sts:AssumeRole on this role can use it.
      assumedBy: props.assumedBy ?? new AccountRootPrincipal(),
    });
  }
}
