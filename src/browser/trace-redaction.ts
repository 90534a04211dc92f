import { readZip, writeZip } from '../lib/zip.js';

/**
 * A Playwright trace records every request with its cookies and headers, so
 * the vendor session id would sit in the evidence for anyone who can read
 * traces. Credentials never enter a trace (logins happen before tracing
 * starts); this removes the session material the network log picked up.
 */
const SECRET_HEADERS = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization', 'x-csrf-token']);
export const REDACTED = '[redacted]';

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'cookies' && Array.isArray(inner)) {
      out[key] = inner.map((c) => (c && typeof c === 'object' ? { ...(c as object), value: REDACTED } : c));
    } else if (key === 'headers' && Array.isArray(inner)) {
      out[key] = inner.map((h) =>
        h && typeof h === 'object' && SECRET_HEADERS.has(String((h as { name?: unknown }).name).toLowerCase())
          ? { ...(h as object), value: REDACTED }
          : h,
      );
    } else {
      out[key] = redactValue(inner);
    }
  }
  return out;
}

/** Returns the trace with cookie, authorization and CSRF values replaced in its network log. */
export function redactTrace(trace: Buffer): Buffer {
  const entries = readZip(trace);
  for (const [name, content] of entries) {
    if (!name.endsWith('.network')) continue;
    const lines = content
      .toString('utf8')
      .split('\n')
      .map((line) => (line.trim() ? JSON.stringify(redactValue(JSON.parse(line))) : line));
    entries.set(name, Buffer.from(lines.join('\n'), 'utf8'));
  }
  return writeZip(entries);
}
