import { z } from 'zod';
import type { Services } from '../app/services.js';
import { handleApprovalHttp, MAX_BODY_BYTES, type ApprovalHttpResponse } from './handle-request.js';

/**
 * The approval endpoint behind a Lambda Function URL (payload format 2.0):
 * translates the event into the shared request shape and the answer back.
 */

const FunctionUrlEvent = z
  .object({
    rawPath: z.string().startsWith('/'),
    rawQueryString: z.string().default(''),
    headers: z.record(z.string(), z.string()).default({}),
    cookies: z.array(z.string()).optional(),
    body: z.string().optional(),
    isBase64Encoded: z.boolean().default(false),
    requestContext: z
      .object({
        domainName: z.string().optional(),
        http: z.object({ method: z.string().min(1) }).passthrough(),
      })
      .passthrough(),
  })
  .passthrough();

export interface FunctionUrlResult {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
  body: string;
  isBase64Encoded: boolean;
}

function toResult(response: ApprovalHttpResponse): FunctionUrlResult {
  const binary = Buffer.isBuffer(response.body);
  return {
    statusCode: response.status,
    headers: response.headers,
    ...(response.cookies.length > 0 ? { cookies: response.cookies } : {}),
    body: binary ? (response.body as Buffer).toString('base64') : (response.body as string),
    isBase64Encoded: binary,
  };
}

const plain = (statusCode: number, text: string): FunctionUrlResult => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body: `${text}\n`,
  isBase64Encoded: false,
});

export async function handleFunctionUrlEvent(s: Services, event: unknown): Promise<FunctionUrlResult> {
  const parsed = FunctionUrlEvent.safeParse(event);
  if (!parsed.success) return plain(400, 'bad request');
  const e = parsed.data;
  const headers: Record<string, string | undefined> = Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k.toLowerCase(), v]));
  // Function URLs move cookies out of the headers into their own array.
  if (e.cookies?.length) headers['cookie'] = e.cookies.join('; ');
  const body = e.body === undefined ? '' : e.isBase64Encoded ? Buffer.from(e.body, 'base64').toString('utf8') : e.body;
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) return plain(413, 'request too large');
  // The domain AWS routed this request to; the Host header is whatever the client sent.
  const host = e.requestContext.domainName;
  const response = await handleApprovalHttp(s, {
    method: e.requestContext.http.method.toUpperCase(),
    path: e.rawPath,
    query: new URLSearchParams(e.rawQueryString),
    headers,
    body,
    selfOrigin: host ? `https://${host}` : '',
  });
  return toResult(response);
}
