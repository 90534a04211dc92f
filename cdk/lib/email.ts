import { EmailIdentity, Identity } from 'aws-cdk-lib/aws-ses';
import { Construct } from 'constructs';

/**
 * The SES identity approval mails are sent from. A domain identity publishes
 * DKIM records (Easy DKIM) and covers every address at the domain; an address
 * identity is verified by clicking the link SES mails to it.
 */
export class SenderIdentity extends Construct {
  readonly identity: EmailIdentity;

  constructor(scope: Construct, id: string, props: { senderAddress: string; senderDomain?: string }) {
    super(scope, id);
    this.identity = new EmailIdentity(this, 'Identity', {
      identity: props.senderDomain ? Identity.domain(props.senderDomain) : Identity.email(props.senderAddress),
    });
  }
}
