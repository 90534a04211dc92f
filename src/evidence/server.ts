import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { closeServer, listen, LOCAL_HOST } from '../http/listen.js';
import type { BucketReader } from './bucket.js';
import { html, raw } from '../http/html.js';
import { badge, formatBytes, page, relativeHref } from './html.js';
import { PAGE_NAME } from './folder.js';

/**
 * A read-only HTTP view of the evidence bucket for development: folders get a
 * listing, objects are served as stored. The CSP forbids anything but this
 * origin, so a page that tried to load from the internet would show broken
 * here too.
 */

export interface EvidenceServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

const CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** A request path, decoded: relative key segments only, no way out of the bucket. */
const KeyPath = z
  .string()
  .max(1024, 'the path is longer than any evidence key')
  .refine((p) => !p.includes('\0'), 'the path contains a NUL byte')
  .refine((p) => p.split('/').every((segment) => segment !== '..' && segment !== '.'), 'the path contains a . or .. segment');

function decodePath(url: string | undefined): { key: string } | { error: string } {
  const raw = (url ?? '/').split('?')[0]!;
  let decoded: string;
  try {
    decoded = raw
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/');
  } catch {
    return { error: 'the path is not valid percent-encoding' };
  }
  const parsed = KeyPath.safeParse(decoded.replace(/^\/+/, ''));
  if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? 'invalid path' };
  return { key: parsed.data };
}

function send(res: ServerResponse, status: number, contentType: string, body: Buffer | string, head = false): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : body);
}

function listingPage(prefix: string, listing: Awaited<ReturnType<BucketReader['list']>>, source: string): string {
  const name = (full: string) => full.slice(prefix.length);
  const up = prefix ? html`<tr><td><a href="../">../</a></td><td></td><td></td></tr>` : '';
  const folders = listing.folders.map(
    (f) => html`<tr><td><a href="${relativeHref(name(f).replace(/\/$/, ''))}/">${name(f)}</a></td><td>folder</td><td></td></tr>`,
  );
  const objects = listing.objects.map(
    (o) =>
      html`<tr><td><a href="${relativeHref(name(o.key))}">${name(o.key)}</a></td><td>${formatBytes(o.bytes)}</td><td>${o.modified?.toISOString() ?? ''}</td></tr>`,
  );
  const hasPage = listing.objects.some((o) => name(o.key) === PAGE_NAME);
  return page(
    `/${prefix} — evidence bucket`,
    html`<h1>/${prefix}</h1>
<p class="sub">证据桶 Evidence bucket · ${source}</p>
${hasPage ? html`<p>${raw(badge('page', 'info'))} <a href="${PAGE_NAME}">打开证据页 Open the evidence page of this folder</a></p>` : ''}
<table><tr><th>名称 Name</th><th>大小 Size</th><th>修改时间 Modified</th></tr>${up}${folders}${objects}</table>
${listing.folders.length + listing.objects.length === 0 ? html`<p class="note">Empty.</p>` : ''}`.value,
  );
}

async function handle(reader: BucketReader, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, 'text/plain; charset=utf-8', 'read-only: GET and HEAD only\n');
    return;
  }
  const head = req.method === 'HEAD';
  const path = decodePath(req.url);
  if ('error' in path) {
    send(res, 400, 'text/plain; charset=utf-8', `${path.error}\n`, head);
    return;
  }
  const { key } = path;
  if (key === '' || key.endsWith('/')) {
    const listing = await reader.list(key);
    if (key !== '' && listing.folders.length === 0 && listing.objects.length === 0) {
      send(res, 404, 'text/plain; charset=utf-8', `no such folder: /${key}\n`, head);
      return;
    }
    send(res, 200, 'text/html; charset=utf-8', listingPage(key, listing, reader.describe()), head);
    return;
  }
  const object = await reader.get(key);
  if (object) {
    send(res, 200, object.contentType, object.body, head);
    return;
  }
  // A folder asked for without its trailing slash: send the browser to the listing.
  const asFolder = await reader.list(`${key}/`);
  if (asFolder.folders.length + asFolder.objects.length > 0) {
    res.writeHead(301, { location: `${relativeHref(key.split('/').at(-1)!)}/` });
    res.end();
    return;
  }
  send(res, 404, 'text/plain; charset=utf-8', `no such object: /${key}\n`, head);
}

export async function startEvidenceServer(options: { reader: BucketReader; port?: number; host?: string }): Promise<EvidenceServer> {
  const server = createServer((req, res) => {
    handle(options.reader, req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `could not read the bucket: ${(error as Error).message}\n`);
      else res.destroy();
    });
  });
  const host = options.host ?? LOCAL_HOST;
  const port = await listen(server, options.port ?? 0, host);
  return { url: `http://${host}:${port}`, port, stop: () => closeServer(server) };
}
