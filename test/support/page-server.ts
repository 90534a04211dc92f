import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listen, LOCAL_HOST } from '../../src/http/listen.js';

/** A local server of hand-written pages for browser tests, and what those pages reported writing. */
export interface PageServer {
  url: string;
  /** The JSON bodies the pages POSTed to /journal, in order: what a click on a page "wrote". */
  journal: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Serves `answer`'s pages on a free local port. `answer` returns the response it sent, or undefined for a path that
 * is not its; POST /journal then records the page's JSON body and anything else is a 404.
 */
export async function startPageServer(
  answer: (url: URL, req: IncomingMessage, res: ServerResponse) => ServerResponse | undefined,
): Promise<PageServer> {
  const journal: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pages');
    if (answer(url, req, res)) return;
    if (url.pathname === '/journal' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        journal.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      return;
    }
    res.writeHead(404).end();
  });
  const port = await listen(server, 0);
  return { url: `http://${LOCAL_HOST}:${port}`, journal, close: () => closeServer(server) };
}
