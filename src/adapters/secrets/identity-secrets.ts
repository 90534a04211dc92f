import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import type { Identity } from '../../config/schema.js';
import type { IdentitySecret } from '../../browser/identity-sessions.js';
import { parseOrThrow } from '../../config/errors.js';

const SecretShape = z.object({ username: z.string().min(1), password: z.string().min(1), apiToken: z.string().min(1).optional() });

/** Resolves an identity's vendor credentials: inline locally, one Secrets Manager secret per identity on AWS. */
export class IdentitySecrets {
  private readonly cache = new Map<string, IdentitySecret>();

  constructor(private readonly secretsManager?: SecretsManagerClient) {}

  async resolve(identity: Identity): Promise<IdentitySecret> {
    const cached = this.cache.get(identity.id);
    if (cached) return cached;
    let secret: IdentitySecret;
    if (identity.credentials.source === 'inline') {
      const { username, password, api_token } = identity.credentials;
      secret = { username, password, apiToken: api_token };
    } else {
      if (!this.secretsManager) throw new Error(`identity ${identity.id} needs Secrets Manager, which is not configured`);
      const value = await this.secretsManager.send(new GetSecretValueCommand({ SecretId: identity.credentials.secret_id }));
      secret = parseOrThrow(SecretShape, JSON.parse(value.SecretString ?? '{}'), `secret ${identity.credentials.secret_id}`);
    }
    this.cache.set(identity.id, secret);
    return secret;
  }
}
