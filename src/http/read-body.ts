import type { IncomingMessage } from 'node:http';
import { NamedError } from '../domain/errors.js';

/** The request body was larger than the server accepts; nothing of it was used. */
export class BodyTooLargeError extends NamedError {
  override name = 'BodyTooLargeError';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** Reads a request body as UTF-8, refusing (and not buffering) more than `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    // Stop buffering; the caller answers 413 on the still-open connection.
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
