import type { Server } from 'node:http';
import { z } from 'zod';
import { closeServer, LOCAL_HOST, portOf } from '../http/listen.js';

export interface LocalSesOptions {
  /** 0 (default) picks a free port. */
  port?: number;
}

export interface LocalSes {
  /** SES v1/v2 API endpoint for SDK clients. */
  endpoint: string;
  /** The web inbox (same server): open it in a browser to read sent mail. */
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

type ServerFactory = (config: { host: string; port: number }) => Promise<Server>;

/**
 * Starts aws-ses-v2-local in this process. Its mailbox is a module-level
 * array, so every instance in one process shares it, and it lives in memory
 * only: mail does not survive a restart.
 */
export async function startLocalSes(options: LocalSesOptions = {}): Promise<LocalSes> {
  const mod = (await import('aws-ses-v2-local')) as unknown as { default: ServerFactory | { default: ServerFactory } };
  const factory = typeof mod.default === 'function' ? mod.default : mod.default.default;
  const server = await factory({ host: LOCAL_HOST, port: options.port ?? 0 });
  const port = portOf(server);
  const base = `http://${LOCAL_HOST}:${port}`;
  let stopped = false;
  return {
    endpoint: base,
    inboxUrl: `${base}/`,
    port,
    fetchEmails: (since?: number) => readSesInbox(`${base}/`, since),
    async clearInbox() {
      const response = await fetch(`${base}/clear-store`, { method: 'POST' });
      if (!response.ok) throw new Error(`local SES clear-store answered HTTP ${response.status}`);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await closeServer(server);
    },
  };
}

/**
 * Mail held by an aws-ses-v2-local server, read over HTTP from its inbox URL
 * (`LocalSes.inboxUrl`), so a server in another process can be read too.
 */
export async function readSesInbox(inboxUrl: string, since?: number): Promise<StoredEmail[]> {
  const url = new URL('store', inboxUrl.endsWith('/') ? inboxUrl : `${inboxUrl}/`);
  if (since !== undefined) url.searchParams.set('since', String(Math.floor(since)));
  const response = await fetch(url);
  if (!response.ok) throw new Error(`local SES inbox ${url.href} answered HTTP ${response.status}`);
  const parsed = storeSchema.safeParse(await response.json());
  if (!parsed.success) throw new Error(`local SES inbox ${url.href} returned an unexpected shape: ${parsed.error.message}`);
  return parsed.data.emails;
}
