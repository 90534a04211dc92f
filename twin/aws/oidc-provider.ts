import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { generateKeyPairSync, randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import Provider from 'oidc-provider';
import { closeServer, listen, LOCAL_HOST } from '../../src/http/listen.js';
import { html } from '../../src/http/html.js';
import { readBody } from '../../src/http/read-body.js';

/**
 * An OpenID Connect provider for the embedded stack (oidc-provider), so that
 * approver sign-in works offline and in tests the way a Cognito user pool does
 * on AWS: authorization code with PKCE, a signed ID token carrying the email.
 * Its users and their passwords come from the config (`embedded_users`); there
 * is no self-registration and no "any login works" development mode.
 */
export interface EmbeddedOidcUser {
  email: string;
  password: string;
}

export interface EmbeddedOidcProvider {
  /** The issuer URL (also the discovery base). */
  issuer: string;
  stop(): Promise<void>;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

function loginPage(uid: string, error?: string): string {
  return html`<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>登录 Sign in</title></head>
<body style="font-family:sans-serif;max-width:28em;margin:3em auto">
<h1>审批人登录 <small>Approver sign-in</small></h1>
${error ? html`<p role="alert" style="color:#a00">${error}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<p><label>邮箱 Email <input name="email" type="email" autocomplete="username" required></label></p>
<p><label>密码 Password <input name="password" type="password" autocomplete="current-password" required></label></p>
<p><button type="submit">登录 Sign in</button></p>
</form></body></html>`.value;
}

export async function startEmbeddedOidcProvider(options: {
  clientId: string;
  redirectUris: string[];
  users: EmbeddedOidcUser[];
  port?: number;
}): Promise<EmbeddedOidcProvider> {
  const users = new Map(options.users.map((u) => [u.email.toLowerCase(), u]));
  const server = createServer();
  const port = await listen(server, options.port ?? 0, LOCAL_HOST);
  const issuer = `http://${LOCAL_HOST}:${port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        redirect_uris: options.redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        // A public client: PKCE is what binds the code to the browser that started the sign-in.
        token_endpoint_auth_method: 'none',
      },
    ],
    pkce: { required: () => true },
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    // The email goes into the ID token itself (as Cognito puts it there), not only into userinfo.
    conformIdTokenClaims: false,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const user = users.get(sub);
      if (!user) return undefined;
      return { accountId: sub, claims: () => ({ sub, email: user.email.toLowerCase(), email_verified: true }) };
    },
    ttl: { Session: 600, Interaction: 600, Grant: 600, AuthorizationCode: 60, IdToken: 600, AccessToken: 600 },
  });

  async function login(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction mismatch');
    const form = new URLSearchParams(await readBody(req, 4096));
    const email = (form.get('email') ?? '').trim().toLowerCase();
    const user = users.get(email);
    // Compare digests so the time taken says nothing about the password.
    const ok = user !== undefined && timingSafeEqual(sha256(form.get('password') ?? ''), sha256(user.password));
    if (!ok) {
      res.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(loginPage(uid, '邮箱或密码不正确 Wrong email or password'));
      return;
    }
    const grant = new provider.Grant({ accountId: email, clientId: options.clientId });
    grant.addOIDCScope('openid email');
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: email }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    const interaction = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(path);
    if (!interaction) {
      callback(req, res);
      return;
    }
    const uid = interaction[1]!;
    void (async () => {
      if (interaction[2] && req.method === 'POST') return login(req, res, uid);
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== uid) throw new Error('interaction mismatch');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(loginPage(uid));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`sign-in failed: ${(error as Error).message}\n`);
    });
  });

  return { issuer, stop: () => closeServer(server) };
}
