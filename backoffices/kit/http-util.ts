import { setTimeout as wait } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { Html } from '../../src/http/html.js';

/** Bodies larger than this are refused with 413 before they are read whole. */
export const MAX_BODY_BYTES = 64 * 1024;

const NO_STORE = { 'cache-control': 'no-store' };

export function sendHtml(res: ServerResponse, status: number, page: Html, headers: Record<string, string> = {}): void {
  const body = Buffer.from(`<!DOCTYPE html>\n${page.value}`, 'utf8');
  res.writeHead(status, {
    ...NO_STORE,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(body.length),
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  res.writeHead(status, {
    ...NO_STORE,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(body.length),
    ...headers,
  });
  res.end(body);
}

export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), ...headers });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(302, { ...NO_STORE, location, 'content-length': '0', ...headers });
  res.end();
}

/** Only same-site paths may be a post-login target (no //evil.example, no schemes). */
export function safeNext(next: string | null | undefined): string | undefined {
  if (!next?.startsWith('/') || next.startsWith('//') || next.includes('\\')) return undefined;
  if (next.startsWith('/login') || next.startsWith('/logout')) return undefined;
  return next;
}

/** A sleep that ends early when the signal aborts (the server is closing). */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return;
  await wait(ms, undefined, { signal }).catch(() => undefined);
}

/** Waits until the client gives up (or the server closes); with ms, answers 504 after ms instead. */
export async function hangAfterCommit(
  ex: { res: ServerResponse; closing: AbortSignal },
  ms: number | undefined,
  answer: () => void,
): Promise<void> {
  const clientGone = new Promise<void>((resolve) => ex.res.once('close', () => resolve()));
  const stop = new AbortController();
  const onClosing = () => stop.abort();
  ex.closing.addEventListener('abort', onClosing, { once: true });
  const waited =
    ms === undefined ? new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve())) : sleep(ms, stop.signal);
  await Promise.race([clientGone, waited]);
  ex.closing.removeEventListener('abort', onClosing);
  stop.abort();
  if (ex.res.writableEnded || ex.res.destroyed) return;
  if (ms === undefined || ex.closing.aborted) {
    ex.res.destroy();
    return;
  }
  answer();
}
