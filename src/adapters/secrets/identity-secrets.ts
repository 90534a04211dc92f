import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import { TotpSecret, type Identity } from '../../config/schema.js';
import type { IdentitySecret } from '../../browser/identity-sessions.js';
import { parseOrThrow } from '../../config/errors.js';

/**
 * The identity's secret as docs/deploy.md documents it: {"username","password","api_token","totp_secret"} (the last
 * two optional). The camelCase spellings (apiToken, totpSecret) are read too, as earlier versions read them.
 */
const SecretShape = z
  .object({
    username: z.string().min(1),
    password: z.string().min(1),
    api_token: z.string().min(1).optional(),
    apiToken: z.string().min(1).optional(),
    /** The second factor's enrolment secret (base32), for a site pack with login.secondFactor. */
    totp_secret: TotpSecret.optional(),
    totpSecret: TotpSecret.optional(),
  })
  .transform(({ username, password, api_token, apiToken, totp_secret, totpSecret }): IdentitySecret => {
    const token = api_token ?? apiToken;
    const totp = totp_secret ?? totpSecret;
    return { username, password, ...(token ? { apiToken: token } : {}), ...(totp ? { totpSecret: totp } : {}) };
  });

/** Resolves an identity's vendor credentials: inline locally, one Secrets Manager secret per identity on AWS. */
export class IdentitySecrets {
  private readonly cache = new Map<string, IdentitySecret>();

  constructor(private readonly secretsManager?: SecretsManagerClient) {}

  async resolve(identity: Identity): Promise<IdentitySecret> {
    const cached = this.cache.get(identity.id);
    if (cached) return cached;
    let secret: IdentitySecret;
    if (identity.credentials.source === 'inline') {
      const { username, password, api_token, totp_secret } = identity.credentials;
      secret = { username, password, apiToken: api_token, ...(totp_secret ? { totpSecret: totp_secret } : {}) };
    } else {
      if (!this.secretsManager) throw new Error(`identity ${identity.id} needs Secrets Manager, which is not configured`);
      const value = await this.secretsManager.send(new GetSecretValueCommand({ SecretId: identity.credentials.secret_id }));
      secret = parseOrThrow(SecretShape, JSON.parse(value.SecretString ?? '{}'), `secret ${identity.credentials.secret_id}`);
    }
    this.cache.set(identity.id, secret);
    return secret;
  }
}
