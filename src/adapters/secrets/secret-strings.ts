import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SecretStringsPort } from '../../app/ports/keys.js';

/** Plain secret strings from Secrets Manager (the approval signing key), each read once per process. */
export class SecretStrings implements SecretStringsPort {
  private readonly cache = new Map<string, string>();

  constructor(private readonly secretsManager: SecretsManagerClient) {}

  async get(secretId: string): Promise<string | undefined> {
    const cached = this.cache.get(secretId);
    if (cached !== undefined) return cached;
    const value = (await this.secretsManager.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
    if (value !== undefined) this.cache.set(secretId, value);
    return value;
  }
}
