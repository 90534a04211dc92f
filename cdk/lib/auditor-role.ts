import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyStatement, Role, type IPrincipal } from 'aws-cdk-lib/aws-iam';
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

  /**
   * Read-only access to the records an audit checks the evidence against:
   * the hash-chained audit log and the claims (`paperclip audit verify`).
   * Not the approvals table, whose items hold live task tokens.
   */
  grantReadRecords(tables: readonly ITable[]): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadAuditRecords',
        actions: ['dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan'],
        resources: tables.map((table) => table.tableArn),
      }),
    );
  }
}
