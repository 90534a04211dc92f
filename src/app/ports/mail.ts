/** Mail from the configured sender (approval requests, takeover notices). The SES adapter implements it (src/adapters/ses/mailer.ts). */
export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface MailPort {
  /** Sends one mail; the provider's message id when it gives one. */
  send(mail: Mail): Promise<string | undefined>;
}
