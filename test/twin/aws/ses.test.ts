import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { awsClientConfig } from '../../../twin/aws/aws-config.js';
import { inboxAddress, readSesInbox, startLocalSes, type LocalSes } from '../../../twin/aws/ses.js';

/**
 * The local SES inbox holds every approval link: it listens on loopback only,
 * and shows, downloads or clears mail only for the token printed at start.
 * The SES API itself stays open to the SDK clients, as SES's endpoint is.
 */
let ses: LocalSes;
before(async () => {
  ses = await startLocalSes();
});
after(async () => {
  await ses?.stop();
});

test('the inbox needs its token; the SES API does not; the web page gets a cookie for its own requests', async () => {
  const client = new SESv2Client(awsClientConfig(ses.endpoint, 'us-east-1'));
  await client.send(
    new SendEmailCommand({
      FromEmailAddress: 'paperclip@example.com',
      Destination: { ToAddresses: ['finance.lead@acme.example'] },
      Content: { Simple: { Subject: { Data: '审批请求' }, Body: { Text: { Data: 'http://127.0.0.1/approvals/abc' } } } },
    }),
  );
  client.destroy();
  assert.equal(new URL(ses.inboxUrl).hostname, '127.0.0.1', 'loopback only');
  const token = new URL(ses.inboxUrl).searchParams.get('token');
  assert.ok(token && token.length >= 32, 'the inbox URL carries a random token');
  const base = inboxAddress(ses.inboxUrl);
  assert.equal(base, `${ses.endpoint}/`);

  // Without the token (or with another one): nothing shown, nothing downloaded, nothing cleared.
  for (const path of [
    '/',
    '/store',
    '/store?since=0',
    '/get-emlContent?messageId=x',
    `/store?token=${'x'.repeat(token.length)}`,
    '/index.html',
  ]) {
    const response = await fetch(new URL(path, ses.endpoint));
    assert.equal(response.status, 401, path);
    assert.doesNotMatch(await response.text(), /approvals\/abc/, path);
  }
  assert.equal((await fetch(new URL('/clear-store', ses.endpoint), { method: 'POST' })).status, 401);
  await assert.rejects(readSesInbox(base), /answered HTTP 401/);

  // With it: the mail (and the clear-store above changed nothing).
  const mails = await readSesInbox(ses.inboxUrl);
  assert.equal(mails.length, 1);
  assert.deepEqual(await ses.fetchEmails(), mails);

  // The page opened from the printed URL sets an HttpOnly, SameSite=Strict cookie that its own fetches of /store carry.
  const page = await fetch(ses.inboxUrl);
  assert.equal(page.status, 200);
  const cookie = page.headers.getSetCookie()[0] ?? '';
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  const byCookie = await fetch(new URL('/store', ses.endpoint), { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(byCookie.status, 200);
  assert.match(await byCookie.text(), /approvals\/abc/);

  await ses.clearInbox();
  assert.deepEqual(await ses.fetchEmails(), []);
});
