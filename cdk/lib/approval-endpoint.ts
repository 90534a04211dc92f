import { CfnOutput } from 'aws-cdk-lib';
import { FunctionUrlAuthType, InvokeMode, type CfnFunction, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { PaperclipFunction } from './paperclip-function.js';

/**
 * The page approvers land on from the email. A Lambda Function URL with no AWS
 * auth: approvers are people with a mail client, not IAM principals, and every
 * link carries an HMAC over (approval id, approver, expiry) that the handler
 * verifies before showing or deciding anything. The task token never appears
 * in a URL; it stays in the approvals table.
 */
export class ApprovalEndpoint extends Construct {
  readonly url: FunctionUrl;

  constructor(
    scope: Construct,
    id: string,
    props: { handler: PaperclipFunction; requestApproval: PaperclipFunction; publicBaseUrl?: string; reservedConcurrency: number },
  ) {
    super(scope, id);
    // A public URL: its reserved concurrency is also its cap, so no flood of requests reaches the concurrency
    // the workflows' functions draw on (deploy config approvalReservedConcurrency).
    (props.handler.fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = props.reservedConcurrency;
    this.url = props.handler.fn.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.BUFFERED,
    });
    // The links in the mails point here unless the deployment fronts it with its own domain.
    props.requestApproval.fn.addEnvironment('PAPERCLIP_APPROVAL_BASE_URL', props.publicBaseUrl ?? this.url.url);
    new CfnOutput(this, 'ApprovalUrl', {
      value: this.url.url,
      description: 'Base URL of the approval pages (links in approval mails)',
    });
  }
}
