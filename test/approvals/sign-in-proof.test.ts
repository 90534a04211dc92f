import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { IdTokenVerifier } from '../../src/adapters/oidc/id-token-verifier.js';
import { SIGN_IN_SKEW_SECONDS, signInClaimsProblem, type SignInExpectation } from '../../src/domain/sign-in-proof.js';
import { canonicalPrincipal } from '../../src/domain/principal.js';

/**
 * The write's check of a decision's ID token, against a provider that
 * publishes its keys over HTTP the way the embedded provider and Cognito do
 * (discovery, then JWKS): every claim is checked with a validly signed token
 * that gets exactly one claim wrong, and a token signed with another key or
 * edited after signing fails on the signature.
 */
describe('the decision sign-in proof (ID token against the issuer published keys)', () => {
  let server: Server;
  let issuer: string;
  let key: Awaited<ReturnType<typeof generateKeyPair>>;
  const fetched: string[] = [];
  let jwksUri: (issuer: string) => string = (i) => `${i}/jwks`;
  const approvalId = 'k-acme_0123456789abcdef-ABCDEFGHIJKLMNOPQRSTUVWX';
  const requestedAt = Date.parse('2026-12-05T01:00:00Z');
  const decidedAt = requestedAt + 5 * 60_000;
  const approver = 'finance.lead@acme.example';

  before(async () => {
    key = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', use: 'sig', alg: 'RS256' };
    server = createServer((req, res) => {
      fetched.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: jwksUri(issuer) }));
      else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }));
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const seconds = (ms: number) => Math.floor(ms / 1000);
  const good = (): JWTPayload => ({
    iss: issuer,
    aud: 'paperclip-approvals',
    sub: 'subject-1',
    email: approver,
    email_verified: true,
    nonce: `${approvalId}.${'n'.repeat(43)}`,
    iat: seconds(decidedAt - 60_000),
    exp: seconds(decidedAt + 540_000),
  });
  const sign = (claims: JWTPayload, signingKey = key.privateKey, kid = 'k1') =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(signingKey);
  const expectation = (): SignInExpectation => ({
    issuer,
    clientId: 'paperclip-approvals',
    approvalId,
    approver,
    subject: 'subject-1',
    requestedAt,
    expiresAt: requestedAt + 3_600_000,
    decidedAt,
    canonical: (raw) => canonicalPrincipal(raw),
  });

  /** What the write concludes about a token: undefined when proven, else why not. */
  async function check(token: string, verifier = new IdTokenVerifier()): Promise<string | undefined> {
    try {
      const claims = await verifier.verify(token, {
        issuer,
        audience: 'paperclip-approvals',
        at: new Date(decidedAt),
        toleranceSeconds: SIGN_IN_SKEW_SECONDS,
      });
      return signInClaimsProblem(claims, expectation());
    } catch (error) {
      return (error as Error).message;
    }
  }

  test('a token the provider signed for this approver, this approval and this time proves the sign-in', async () => {
    assert.equal(await check(await sign(good())), undefined);
  });

  test('each claim tampered (with a valid signature) is refused, naming what is wrong', async () => {
    const cases: [string, Partial<JWTPayload> & Record<string, unknown>, RegExp][] = [
      ['iss', { iss: 'http://127.0.0.1:1' }, /unexpected "iss"|issued by/],
      ['aud', { aud: 'another-client' }, /unexpected "aud"|not for the client/],
      ['sub', { sub: 'subject-2' }, /another subject/],
      ['email', { email: 'controller@acme.example' }, /someone other than finance\.lead/],
      ['email_verified', { email_verified: false }, /no verified email/],
      ['nonce of another approval', { nonce: `k-acme_other0123456789ab.${'n'.repeat(43)}` }, /another approval/],
      ['no nonce', { nonce: undefined }, /another approval/],
      [
        'expired before the decision',
        { iat: seconds(decidedAt - 1_200_000), exp: seconds(decidedAt - 600_000) },
        /"exp" claim timestamp check failed/,
      ],
      [
        'issued before the request',
        { iat: seconds(requestedAt - 3_600_000), exp: seconds(decidedAt + 60_000) },
        /before the approval was requested/,
      ],
      ['issued after the decision', { iat: seconds(decidedAt + 600_000), exp: seconds(decidedAt + 1_200_000) }, /after the decision/],
    ];
    for (const [name, changes, why] of cases) {
      const claims = { ...good(), ...changes };
      for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
      const problem = await check(await sign(claims));
      assert.ok(problem, `${name} must be refused`);
      assert.match(problem, why, name);
    }
  });

  test('a token signed with another key, edited after signing, unsigned or not a token at all is refused on the signature', async () => {
    const other = await generateKeyPair('RS256');
    const valid = await sign(good());
    const [header, , signature] = valid.split('.') as [string, string, string];
    const edited = `${header}.${Buffer.from(JSON.stringify({ ...good(), sub: 'subject-2' })).toString('base64url')}.${signature}`;
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(good())).toString('base64url')}.`;
    for (const [name, token] of [
      ['another key under the provider key id', await sign(good(), other.privateKey)],
      ['edited payload', edited],
      ['cut signature', `${valid.slice(0, -6)}AAAAAA`],
      ['alg none', unsigned],
      ['invented', 'invented'],
    ] as const) {
      assert.match((await check(token)) ?? 'accepted', /does not verify with .*published keys/, name);
    }
  });

  test('discovery and keys are fetched once per process and reused; keys on another origin are refused', async () => {
    const verifier = new IdTokenVerifier();
    fetched.length = 0;
    for (let i = 0; i < 3; i++) assert.equal(await check(await sign(good()), verifier), undefined);
    assert.deepEqual(fetched, ['/.well-known/openid-configuration', '/jwks']);

    jwksUri = () => 'http://127.0.0.2:9/jwks';
    try {
      assert.match((await check(await sign(good()))) ?? 'accepted', /publishes its keys on another origin/);
    } finally {
      jwksUri = (i) => `${i}/jwks`;
    }
  });
});
