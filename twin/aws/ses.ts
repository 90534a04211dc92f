import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { closeServer, LOCAL_HOST, portOf } from '../../src/http/listen.js';
import { parseCookies } from '../../src/http/cookies.js';
import { stopOnce } from './stop-once.js';

export interface LocalSesOptions {
  /** 0 (default) picks a free port. */
  port?: number;
}

export interface LocalSes {
  /** SES v1/v2 API endpoint for SDK clients. */
  endpoint: string;
  /**
   * The web inbox (same server), with its access token in the query: open it in
   * a browser to read sent mail. A credential (every approval link is in there):
   * printed once at start, never logged elsewhere.
   */
  inboxUrl: string;
  port: number;
  /** Emails accepted so far, oldest first; `since` is epoch seconds. */
  fetchEmails(since?: number): Promise<StoredEmail[]>;
  clearInbox(): Promise<void>;
  stop(): Promise<void>;
}

/** The shape aws-ses-v2-local returns from GET /store (fields we rely on). */
export const storedEmailSchema = z.object({
  messageId: z.string(),
  from: z.string(),
  replyTo: z.array(z.string()).default([]),
  destination: z.object({
    to: z.array(z.string()).default([]),
    cc: z.array(z.string()).default([]),
    bcc: z.array(z.string()).default([]),
  }),
  subject: z.string(),
  body: z.object({ html: z.string().optional(), text: z.string().optional() }),
  attachments: z.array(z.object({ filename: z.string().optional(), contentType: z.string(), size: z.number() }).passthrough()).default([]),
  at: z.number(),
});
export type StoredEmail = z.infer<typeof storedEmailSchema>;

const storeSchema = z.object({ emails: z.array(storedEmailSchema) });

const TOKEN_PARAM = 'token';
const TOKEN_COOKIE = 'pc_ses_inbox';

/** The inbox address without its token, for messages that only point at it. */
export function inboxAddress(inboxUrl: string): string {
  const url = new URL(inboxUrl);
  url.search = '';
  return url.href;
}

/**
 * The SES API (what SDK clients call: `POST /` with an AWS Authorization
 * header, the v2 `/v2/email/...` routes, the health check) stays open like
 * SES's own endpoint; everything else the emulator serves (the web inbox,
 * `/store`, `/clear-store`, `/get-emlContent`) shows or deletes mail, and
 * needs the token: `?token=` in the URL (which also sets an HttpOnly,
 * SameSite=Strict cookie, so the inbox page's own requests carry it) or that cookie.
 */
function guardInbox(server: Server, token: string): void {
  const expected = Buffer.from(token);
  const matches = (given: string | null | undefined) => {
    const value = Buffer.from(given ?? '');
    return value.length === expected.length && timingSafeEqual(value, expected);
  };
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://inbox.invalid');
    const api =
      (req.method === 'POST' && url.pathname === '/') || url.pathname.startsWith('/v2/email/') || url.pathname === '/health-check';
    const fromQuery = matches(url.searchParams.get(TOKEN_PARAM));
    if (!api && !fromQuery && !matches(parseCookies(req.headers.cookie).get(TOKEN_COOKIE))) {
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end('The local SES inbox needs its token: open the address printed at start (approval emails ...?token=...).\n');
      return;
    }
    if (fromQuery) res.setHeader('set-cookie', `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`);
    for (const handler of handlers) handler.call(server, req, res);
  });
}

type ServerFactory = (config: { host: string; port: number }) => Promise<Server>;

/**
 * Starts aws-ses-v2-local in this process. Its mailbox is a module-level
 * array, so every instance in one process shares it, and it lives in memory
 * only: mail does not survive a restart.
 */
export async function startLocalSes(options: LocalSesOptions = {}): Promise<LocalSes> {
  const mod = (await import('aws-ses-v2-local')) as unknown as { default: ServerFactory | { default: ServerFactory } };
  const factory = typeof mod.default === 'function' ? mod.default : mod.default.default;
  // Loopback only, and a token: every approval link is in this inbox.
  const server = await factory({ host: LOCAL_HOST, port: options.port ?? 0 });
  const token = randomBytes(24).toString('base64url');
  guardInbox(server, token);
  const port = portOf(server);
  const base = `http://${LOCAL_HOST}:${port}`;
  const inboxUrl = `${base}/?${TOKEN_PARAM}=${token}`;
  return {
    endpoint: base,
    inboxUrl,
    port,
    fetchEmails: (since?: number) => readSesInbox(inboxUrl, since),
    async clearInbox() {
      const response = await fetch(`${base}/clear-store?${TOKEN_PARAM}=${token}`, { method: 'POST' });
      if (!response.ok) throw new Error(`local SES clear-store answered HTTP ${response.status}`);
    },
    stop: stopOnce(() => closeServer(server)),
  };
}

/**
 * Mail held by an aws-ses-v2-local server, read over HTTP from its inbox URL
 * (`LocalSes.inboxUrl`, token included), so a server in another process can be read too.
 */
export async function readSesInbox(inboxUrl: string, since?: number): Promise<StoredEmail[]> {
  const inbox = new URL(inboxUrl);
  const url = new URL('store', inbox.pathname.endsWith('/') ? inbox : `${inbox.href}/`);
  url.search = '';
  const token = inbox.searchParams.get(TOKEN_PARAM);
  if (token) url.searchParams.set(TOKEN_PARAM, token);
  if (since !== undefined) url.searchParams.set('since', String(Math.floor(since)));
  const where = inboxAddress(url.href);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`local SES inbox ${where} answered HTTP ${response.status}`);
  const parsed = storeSchema.safeParse(await response.json());
  if (!parsed.success) throw new Error(`local SES inbox ${where} returned an unexpected shape: ${parsed.error.message}`);
  return parsed.data.emails;
}
