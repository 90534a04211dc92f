import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { IdentitySecrets } from '../../src/adapters/secrets/identity-secrets.js';
import type { Identity } from '../../src/config/schema.js';

/** A Secrets Manager that answers every GetSecretValue with `value`. */
const secretsManager = (value: unknown) =>
  ({ send: async () => ({ SecretString: JSON.stringify(value) }) }) as unknown as SecretsManagerClient;
const identity: Identity = {
  id: 'svc-recon-acme',
  tenants: ['acme'],
  credentials: { source: 'secrets_manager', secret_id: 'p/identity/svc-recon-acme' },
};

test('an identity secret carries its API token and TOTP secret as docs/deploy.md spells them', async () => {
  const secret = await new IdentitySecrets(
    secretsManager({ username: 'svc', password: 'pw', api_token: 'tok', totp_secret: 'jbsw y3dp ehpk 3pxp' }),
  ).resolve(identity);
  assert.deepEqual(secret, { username: 'svc', password: 'pw', apiToken: 'tok', totpSecret: 'JBSWY3DPEHPK3PXP' });
  const camel = await new IdentitySecrets(secretsManager({ username: 'svc', password: 'pw', apiToken: 'tok' })).resolve(identity);
  assert.deepEqual(camel, { username: 'svc', password: 'pw', apiToken: 'tok' });
});

test('a TOTP secret that is not base32 is refused naming the field, without echoing it', async () => {
  await assert.rejects(
    new IdentitySecrets(secretsManager({ username: 'svc', password: 'pw', totp_secret: '123456' })).resolve(identity),
    (error: Error) => /totp_secret/.test(error.message) && !error.message.includes('123456'),
  );
});

test('inline credentials carry the TOTP secret too', async () => {
  const inline: Identity = {
    ...identity,
    credentials: { source: 'inline', username: 'svc', password: 'pw', totp_secret: 'JBSWY3DPEHPK3PXP' },
  };
  assert.equal((await new IdentitySecrets().resolve(inline)).totpSecret, 'JBSWY3DPEHPK3PXP');
});
