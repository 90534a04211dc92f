import { SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { Mail, MailPort } from '../../app/ports/mail.js';

/** Sends mail through SES v2 (aws-ses-v2-local on the local stack). */
export class Mailer implements MailPort {
  constructor(
    private readonly ses: SESv2Client,
    private readonly from: string,
  ) {}

  async send(mail: Mail): Promise<string | undefined> {
    const result = await this.ses.send(
      new SendEmailCommand({
        FromEmailAddress: this.from,
        Destination: { ToAddresses: mail.to },
        Content: {
          Simple: {
            Subject: { Data: mail.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
          },
        },
      }),
    );
    return result.MessageId;
  }
}
