import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { IdTokensPort } from '../../app/ports/keys.js';
import { NamedError } from '../../domain/errors.js';

/**
 * Verifies an ID token against the keys its issuer publishes (JWKS): the
 * embedded OpenID provider locally, the Cognito user pool on AWS. The issuer
 * URL comes from the deployment, never from the token or a stored record, so
 * a token signed with any other key fails. Discovery and keys are cached per
 * process and time-bounded: a warm function asks the provider at most every
 * few minutes, and never waits on it for long.
 */

/** How long discovery and the key set are reused before they are fetched again. */
const CACHE_MS = 10 * 60 * 1000;
/** How long one fetch of discovery or the key set may take. */
const FETCH_TIMEOUT_MS = 5000;

const Discovery = z.object({ issuer: z.string(), jwks_uri: z.string().url() });

export class IdTokenRefusedError extends NamedError {
  override readonly name = 'IdTokenRefusedError';
}

interface Keys {
  jwks: ReturnType<typeof createRemoteJWKSet>;
  fetchedAt: number;
}

export class IdTokenVerifier implements IdTokensPort {
  private readonly keys = new Map<string, Promise<Keys>>();

  /**
   * The token's payload once its signature verifies with one of the issuer's
   * published keys, its `iss` is the issuer and its `aud` the client; `at` is
   * the instant the token must have been valid at (the decision), with
   * `toleranceSeconds` of clock skew. Throws IdTokenRefusedError naming why.
   */
  async verify(token: string, expect: { issuer: string; audience: string; at: Date; toleranceSeconds: number }): Promise<JWTPayload> {
    const { jwks } = await this.keysOf(expect.issuer);
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: expect.issuer,
        audience: expect.audience,
        currentDate: expect.at,
        clockTolerance: expect.toleranceSeconds,
        // Providers sign ID tokens with RSA or EC keys; never "none", never a shared secret.
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384'],
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      });
      return payload;
    } catch (error) {
      throw new IdTokenRefusedError(`the ID token does not verify with ${expect.issuer}'s published keys (${(error as Error).message})`);
    }
  }

  private keysOf(issuer: string): Promise<Keys> {
    const cached = this.keys.get(issuer);
    if (cached) {
      // A failed or stale lookup is retried on the next call, not kept.
      void cached.then((k) => Date.now() - k.fetchedAt > CACHE_MS && this.keys.get(issuer) === cached && this.keys.delete(issuer));
      return cached;
    }
    const found = discover(issuer);
    found.catch(() => this.keys.delete(issuer));
    this.keys.set(issuer, found);
    return found;
  }
}

async function discover(issuer: string): Promise<Keys> {
  const url = new URL(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  let body: unknown;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = await response.json();
  } catch (error) {
    throw new IdTokenRefusedError(`the identity provider's discovery document ${url.href} could not be read (${(error as Error).message})`);
  }
  const parsed = Discovery.safeParse(body);
  if (!parsed.success || parsed.data.issuer !== issuer) {
    throw new IdTokenRefusedError(`the discovery document at ${url.href} does not describe the issuer ${issuer}`);
  }
  // The keys must come from the issuer's own origin: a discovery answer cannot point the check at someone else's keys.
  const jwksUri = new URL(parsed.data.jwks_uri);
  if (jwksUri.origin !== new URL(issuer).origin) {
    throw new IdTokenRefusedError(`the issuer ${issuer} publishes its keys on another origin (${jwksUri.origin})`);
  }
  return {
    jwks: createRemoteJWKSet(jwksUri, { timeoutDuration: FETCH_TIMEOUT_MS, cacheMaxAge: CACHE_MS, cooldownDuration: 30_000 }),
    fetchedAt: Date.now(),
  };
}
