import { readZip, writeZip } from '../lib/zip.js';

/**
 * A Playwright trace records every request with its cookies, headers and
 * bodies, every response body, and DOM snapshots of the pages, so the vendor
 * session id and its CSRF tokens would sit in the evidence for anyone who can
 * read traces. Credentials never enter a trace (logins happen before tracing
 * starts); this removes the session material the trace picked up:
 *
 * - cookie, authorization and CSRF header values in the network log;
 * - the values of the page secrets the site pack names (`pageSecrets`: hidden
 *   form fields such as `_csrf`, meta tags such as `csrf-token`), wherever they
 *   appear: DOM snapshots, recorded POST bodies, stored response bodies.
 *
 * The values are first collected from every place a named field shows up,
 * then replaced in every text entry of the archive, so a token copied into a
 * script, a JSON answer or a URL is gone too.
 */
const SECRET_HEADERS = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization', 'x-csrf-token']);
export const REDACTED = '[redacted]';
/** Shorter values are not tokens, and replacing them everywhere would shred the trace. */
const MIN_SECRET_LENGTH = 8;
/** Attributes that name a node rather than hold its secret. */
const NAMING_ATTRIBUTES = new Set(['name', 'type', 'id', 'class', 'autocomplete', 'http-equiv']);

function redactValue(value: unknown, found: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => redactValue(v, found));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'cookies' && Array.isArray(inner)) {
      out[key] = inner.map((c) => (c && typeof c === 'object' ? { ...(c as object), value: REDACTED } : c));
    } else if (key === 'headers' && Array.isArray(inner)) {
      out[key] = inner.map((h) => {
        if (!h || typeof h !== 'object') return h;
        const header = h as { name?: unknown; value?: unknown };
        if (!SECRET_HEADERS.has(String(header.name).toLowerCase())) return h;
        if (typeof header.value === 'string' && header.name !== 'cookie' && header.name !== 'set-cookie') found.add(header.value);
        return { ...header, value: REDACTED };
      });
    } else {
      out[key] = redactValue(inner, found);
    }
  }
  return out;
}

/** Values of named fields in a DOM snapshot: nodes are [tag, {attributes}, ...children]. */
function collectFromSnapshot(node: unknown, names: ReadonlySet<string>, found: Set<string>): void {
  if (Array.isArray(node)) {
    const attributes = node[1];
    if (typeof node[0] === 'string' && attributes && typeof attributes === 'object' && !Array.isArray(attributes)) {
      const attrs = attributes as Record<string, unknown>;
      const name = typeof attrs['name'] === 'string' ? attrs['name'].toLowerCase() : undefined;
      if (name && names.has(name)) {
        for (const [attr, value] of Object.entries(attrs)) if (!NAMING_ATTRIBUTES.has(attr) && typeof value === 'string') found.add(value);
      }
    }
    for (const child of node) collectFromSnapshot(child, names, found);
  } else if (node && typeof node === 'object') {
    for (const inner of Object.values(node as Record<string, unknown>)) collectFromSnapshot(inner, names, found);
  }
}

/** Values of named fields in a request body: form-encoded, or JSON. */
function collectFromBody(body: string, names: ReadonlySet<string>, found: Set<string>): void {
  if (body.trimStart().startsWith('{')) {
    try {
      collectFromJson(JSON.parse(body), names, found);
      return;
    } catch {
      // not JSON after all: read it as a form
    }
  }
  for (const [name, value] of new URLSearchParams(body)) if (names.has(name.toLowerCase())) found.add(value);
}

function collectFromJson(value: unknown, names: ReadonlySet<string>, found: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) collectFromJson(v, names, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (names.has(key.toLowerCase()) && typeof inner === 'string') found.add(inner);
      else collectFromJson(inner, names, found);
    }
  }
}

/** `<input name="_csrf" value="…">`, `<meta name="csrf-token" content="…">` in stored HTML. */
function collectFromHtml(html: string, names: ReadonlySet<string>, found: Set<string>): void {
  for (const tag of html.matchAll(/<(?:input|meta)\b[^>]*>/gi)) {
    const attrs = new Map<string, string>();
    for (const a of tag[0].matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g))
      attrs.set(a[1]!.toLowerCase(), a[2] ?? a[3] ?? a[4] ?? '');
    if (!names.has((attrs.get('name') ?? '').toLowerCase())) continue;
    for (const [attr, value] of attrs) if (!NAMING_ATTRIBUTES.has(attr)) found.add(decodeEntities(value));
  }
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const isText = (content: Buffer) => !content.subarray(0, 8192).includes(0);

function jsonLines(content: Buffer): unknown[] {
  return content
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim())
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
}

function postDataTexts(event: unknown, out: string[]): void {
  if (Array.isArray(event)) for (const e of event) postDataTexts(e, out);
  else if (event && typeof event === 'object') {
    for (const [key, inner] of Object.entries(event as Record<string, unknown>)) {
      if (key === 'postData' && inner && typeof inner === 'object') {
        const text = (inner as { text?: unknown }).text;
        if (typeof text === 'string') out.push(text);
        const sha1 = (inner as { _sha1?: unknown })._sha1;
        if (typeof sha1 === 'string') out.push(`resources/${sha1}`);
      } else postDataTexts(inner, out);
    }
  }
}

/**
 * Returns the trace with cookie, authorization and CSRF header values replaced
 * in its network log, and every value of the named page secrets replaced
 * throughout.
 */
export function redactTrace(trace: Buffer, pageSecrets: readonly string[] = []): Buffer {
  const entries = readZip(trace);
  const names = new Set(pageSecrets.map((n) => n.toLowerCase()));
  const found = new Set<string>();
  for (const [name, content] of entries) {
    if (!name.endsWith('.network')) continue;
    const lines = content
      .toString('utf8')
      .split('\n')
      .map((line) => (line.trim() ? JSON.stringify(redactValue(JSON.parse(line), found)) : line));
    entries.set(name, Buffer.from(lines.join('\n'), 'utf8'));
  }
  if (names.size > 0) {
    for (const [name, content] of entries) {
      if (name.endsWith('.trace')) for (const event of jsonLines(content)) collectFromSnapshot(event, names, found);
      if (name.endsWith('.network') || name.endsWith('.trace')) {
        const bodies: string[] = [];
        for (const event of jsonLines(content)) postDataTexts(event, bodies);
        for (const body of bodies) {
          const text = body.startsWith('resources/') ? entries.get(body)?.toString('utf8') : body;
          if (text !== undefined) collectFromBody(text, names, found);
        }
      }
      if (name.startsWith('resources/') && isText(content)) collectFromHtml(content.toString('utf8'), names, found);
    }
  }
  const secrets = [...found].filter((v) => v.length >= MIN_SECRET_LENGTH && v !== REDACTED);
  if (secrets.length === 0) return writeZip(entries);
  // Each value as it may be written: raw, form-encoded, JSON-escaped.
  const forms = [...new Set(secrets.flatMap((v) => [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]))].sort(
    (a, b) => b.length - a.length,
  );
  for (const [name, content] of entries) {
    if (!isText(content)) continue;
    let text = content.toString('utf8');
    let changed = false;
    for (const value of forms) {
      if (!text.includes(value)) continue;
      text = text.split(value).join(REDACTED);
      changed = true;
    }
    if (changed) entries.set(name, Buffer.from(text, 'utf8'));
  }
  return writeZip(entries);
}
