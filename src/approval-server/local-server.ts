import { createServer } from 'node:http';
import type { Services } from '../app/services.js';
import { closeServer, listen, LOCAL_HOST } from '../http/listen.js';
import { handleApprovalHttp, MAX_BODY_BYTES, type ApprovalHttpRequest } from './handle-request.js';
import { BodyTooLargeError, readBody } from '../http/read-body.js';

/**
 * The approval endpoint as a plain HTTP server, for the embedded local stack.
 * On AWS the same handling runs behind a Lambda Function URL.
 */
export interface ApprovalServer {
  /** e.g. http://127.0.0.1:4200 — what approval links must point at. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Listens on 127.0.0.1. `services` is read per request, so the server can be
 * started (and its address known) before the services that need that address.
 */
export async function startApprovalServer(options: {
  port?: number;
  services: () => Services;
  /**
   * Runs one request, as one invocation of the approval function: the embedded stack runs it as that
   * function's deployed role, so its calls are evaluated against that role's policy.
   */
  invoke: <T>(request: () => Promise<T>) => Promise<T>;
}): Promise<ApprovalServer> {
  let origin = '';
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      let body = '';
      if (req.method === 'POST') {
        try {
          body = await readBody(req, MAX_BODY_BYTES);
        } catch (error) {
          res.writeHead(error instanceof BodyTooLargeError ? 413 : 400, {
            'content-type': 'text/plain; charset=utf-8',
            connection: 'close',
          });
          res.end(error instanceof BodyTooLargeError ? 'request too large\n' : 'bad request\n');
          return;
        }
      }
      const request: ApprovalHttpRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v])),
        body,
        // The address this server is bound to; a Host header is the client's claim, not ours.
        selfOrigin: origin,
      };
      const response = await options.invoke(() => handleApprovalHttp(options.services(), request));
      const headers: Record<string, string | string[]> = { ...response.headers };
      if (response.cookies.length > 0) headers['set-cookie'] = response.cookies;
      res.writeHead(response.status, headers);
      res.end(response.body);
    })().catch((error: unknown) => {
      console.error(`approval server: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('server error\n');
    });
  });
  server.requestTimeout = 30_000;
  const port = await listen(server, options.port ?? 0, LOCAL_HOST);
  origin = `http://${LOCAL_HOST}:${port}`;
  return {
    url: origin,
    port,
    stop: () => closeServer(server),
  };
}
