import { createHmac, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { z } from 'zod';
import { SIGN_IN_CALLBACK_PATH, type ApproverSignIn, type PaperclipConfig } from '../config/schema.js';
import { canonicalPrincipal } from '../domain/principal.js';
import { approvalOfNonce, signInNonce } from '../domain/sign-in-proof.js';
import { NamedError } from '../domain/errors.js';

/**
 * Approver sign-in on the approval pages: the relying party side of OpenID
 * Connect (authorization code with PKCE, state and nonce checked, ID token
 * verified by openid-client), and the short session it leaves in a signed,
 * HttpOnly cookie. The policy says which requests need it.
 */

export const SESSION_COOKIE = 'pc_signin';
export const FLOW_COOKIE = 'pc_signin_flow';
export const SIGN_IN_PATH = '/auth/sign-in';
export const CALLBACK_PATH = SIGN_IN_CALLBACK_PATH;
const FLOW_SECONDS = 600;

export { signInRequired } from '../domain/sign-in-policy.js';

/**
 * Who is signed in, and for which approval request: the issuer's subject, the
 * verified email (canonical) and the provider's signed ID token, whose nonce
 * names that request. The token goes with the decision, so the write can check
 * the provider's signature itself; a sign-in counts for the one request it was
 * started from.
 */
export interface SignedInApprover {
  email: string;
  issuer: string;
  subject: string;
  approvalId: string;
  idToken: string;
  /** Epoch seconds: the session's end, never after the ID token's. */
  expiresAt: number;
}

const Session = z
  .object({
    email: z.string(),
    issuer: z.string(),
    subject: z.string(),
    approvalId: z.string(),
    idToken: z.string(),
    expiresAt: z.number(),
  })
  .strict();
const Flow = z.object({ state: z.string(), nonce: z.string(), verifier: z.string(), returnTo: z.string(), expiresAt: z.number() }).strict();

// Domain-separated from link signatures and CSRF tokens, which use the same key.
function seal(secret: string, label: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  const mac = createHmac('sha256', secret).update(`${label}\n${payload}`).digest('base64url');
  return `${payload}.${mac}`;
}

function unseal<S extends z.ZodType>(secret: string, label: string, schema: S, token: string | undefined): z.output<S> | undefined {
  if (!token) return undefined;
  const [payload, mac] = token.split('.');
  if (!payload || !mac) return undefined;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${label}\n${payload}`).digest('base64url'));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function cookie(name: string, value: string, options: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  // Lax, not Strict: the answer from the identity provider is a top-level navigation from its site.
  const parts = [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The signed-in approver from the session cookie, if it is ours, intact and not expired. */
export function currentApprover(secret: string, cookieValue: string | undefined, now = Date.now()): SignedInApprover | undefined {
  const session = unseal(secret, 'signin-session', Session, cookieValue);
  if (!session || now >= session.expiresAt * 1000) return undefined;
  return session;
}

/** Where a sign-in may return to: an approval page of this server, never another site. */
export function safeReturnPath(value: string | null | undefined): string | undefined {
  if (!value || !/^\/approvals\/[A-Za-z0-9_-]{16,64}(\?[A-Za-z0-9_.~%&=+-]*)?$/.test(value)) return undefined;
  return value;
}

/** The approval request an accepted return path shows. */
const approvalOfReturn = (returnTo: string) => /^\/approvals\/([A-Za-z0-9_-]+)/.exec(returnTo)![1]!;

const discovered = new Map<string, Promise<oidc.Configuration>>();

/** Discovery once per issuer and process (a warm Lambda reuses it). */
function clientConfiguration(issuer: string, clientId: string): Promise<oidc.Configuration> {
  const cacheKey = `${issuer}\n${clientId}`;
  let found = discovered.get(cacheKey);
  if (!found) {
    const url = new URL(issuer);
    // Plain HTTP only for the embedded provider on the loopback interface; a real issuer is HTTPS (checked in the config).
    const loopback = url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
    found = oidc.discovery(url, clientId, undefined, oidc.None(), loopback ? { execute: [oidc.allowInsecureRequests] } : undefined);
    found.catch(() => discovered.delete(cacheKey));
    discovered.set(cacheKey, found);
  }
  return found;
}

export interface SignInContext {
  config: PaperclipConfig;
  signIn: ApproverSignIn;
  /** The issuer URL actually used (the embedded provider's address locally). */
  issuer: string;
  secret: string;
  /** Public base URL of the approval pages: the redirect URI is under it. */
  baseUrl: string;
}

const redirectUri = (ctx: SignInContext) => new URL(CALLBACK_PATH, ctx.baseUrl).href;
const secure = (ctx: SignInContext) => ctx.baseUrl.startsWith('https:');

/** Starts a sign-in: a fresh state, nonce and PKCE verifier kept in a signed cookie, then off to the provider. */
export async function beginSignIn(
  ctx: SignInContext,
  input: { returnTo: string; loginHint?: string },
): Promise<{ location: string; cookie: string }> {
  const configuration = await clientConfiguration(ctx.issuer, ctx.signIn.client_id);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  // The nonce names the request: the ID token then proves a sign-in for this approval, not for any other.
  const nonce = signInNonce(approvalOfReturn(input.returnTo), oidc.randomNonce());
  const parameters: Record<string, string> = {
    redirect_uri: redirectUri(ctx),
    scope: 'openid email',
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (input.loginHint) parameters['login_hint'] = input.loginHint;
  const location = oidc.buildAuthorizationUrl(configuration, parameters).href;
  const flow = { state, nonce, verifier, returnTo: input.returnTo, expiresAt: Math.floor(Date.now() / 1000) + FLOW_SECONDS };
  return {
    location,
    cookie: cookie(FLOW_COOKIE, seal(ctx.secret, 'signin-flow', flow), {
      path: CALLBACK_PATH,
      maxAgeSeconds: FLOW_SECONDS,
      secure: secure(ctx),
    }),
  };
}

export class SignInFailedError extends NamedError {
  override readonly name = 'SignInFailedError';
}

/**
 * The provider's answer: the code is exchanged with the PKCE verifier, the
 * state and nonce must be the ones this browser started with, and the ID token
 * is verified (issuer, audience, signature, expiry) by openid-client. The
 * approver is the token's verified email.
 */
export async function finishSignIn(
  ctx: SignInContext,
  input: { query: URLSearchParams; flowCookie: string | undefined },
): Promise<{ approver: SignedInApprover; returnTo: string; cookies: string[] }> {
  const flow = unseal(ctx.secret, 'signin-flow', Flow, input.flowCookie);
  if (!flow || Date.now() >= flow.expiresAt * 1000)
    throw new SignInFailedError('the sign-in was not started here or took too long; start again from the link');
  const configuration = await clientConfiguration(ctx.issuer, ctx.signIn.client_id);
  const callbackUrl = new URL(redirectUri(ctx));
  callbackUrl.search = input.query.toString();
  let claims: oidc.IDToken | undefined;
  let idToken: string | undefined;
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
    idToken = tokens.id_token;
  } catch (error) {
    throw new SignInFailedError(`the identity provider's answer was not accepted (${(error as Error).message})`);
  }
  const email = typeof claims?.['email'] === 'string' ? claims['email'] : undefined;
  if (!claims || !email || claims['email_verified'] !== true) {
    throw new SignInFailedError('the identity provider did not vouch for an email address (email and email_verified in the ID token)');
  }
  const approvalId = approvalOfNonce(claims.nonce);
  if (!idToken || !approvalId || approvalId !== approvalOfReturn(flow.returnTo)) {
    throw new SignInFailedError('the identity provider answered without an ID token for this approval; start again from the link');
  }
  const now = Math.floor(Date.now() / 1000);
  const approver: SignedInApprover = {
    email: canonicalPrincipal(email, ctx.config.approvals.plus_addressing),
    issuer: claims.iss,
    subject: claims.sub,
    approvalId,
    idToken,
    // The decision carries the ID token, which the write checks at the decision time: the session ends when the token does.
    expiresAt: Math.min(now + ctx.signIn.session_minutes * 60, claims.exp),
  };
  return {
    approver,
    returnTo: flow.returnTo,
    cookies: [
      cookie(SESSION_COOKIE, seal(ctx.secret, 'signin-session', approver), {
        // Only the approval pages need it (locally the provider shares the host, and cookies ignore ports).
        path: '/approvals',
        maxAgeSeconds: approver.expiresAt - now,
        secure: secure(ctx),
      }),
      cookie(FLOW_COOKIE, '', { path: CALLBACK_PATH, maxAgeSeconds: 0, secure: secure(ctx) }),
    ],
  };
}
