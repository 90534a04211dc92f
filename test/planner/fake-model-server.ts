import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Server } from 'node:net';
import { z } from 'zod';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A local language-model server speaking the real wire formats the planner's
 * providers use: Bedrock Converse (POST /model/<modelId>/converse) and OpenAI
 * chat completions (POST /v1/chat/completions). Replies are scripted per test
 * (a queue, or a function of the request); every request is recorded with its
 * byte size so tests can assert what the planner sent and how big it was.
 * Request bodies are parsed strictly: a provider that drifts from the wire
 * format gets a 400 here, as it would from the real service.
 *
 * Two listeners share one script: the Bedrock runtime SDK talks HTTP/2 (its
 * default handler, kept as in production), fetch talks HTTP/1.1.
 */

export type FakeReply =
  | string
  | { text: string; delayMs?: number; inputTokens?: number; outputTokens?: number }
  | { status: number; body: string };

export interface RecordedRequest {
  wire: 'bedrock' | 'openai';
  path: string;
  modelId: string;
  authorization?: string;
  bodyBytes: number;
  system: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  maxTokens: number;
}

const ConverseBody = z
  .object({
    messages: z
      .array(
        z
          .object({
            role: z.enum(['user', 'assistant']),
            content: z.array(z.object({ text: z.string() }).strict()).min(1),
          })
          .strict(),
      )
      .min(1),
    system: z.array(z.object({ text: z.string() }).strict()).optional(),
    inferenceConfig: z.object({ maxTokens: z.number().int().positive(), temperature: z.number().optional() }).passthrough().optional(),
  })
  .strict();

const ChatBody = z
  .object({
    model: z.string().min(1),
    messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }).strict()).min(1),
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().optional(),
  })
  .strict();

export interface FakeModelServer {
  /** HTTP/1.1 base URL: the OpenAI-compatible endpoint. */
  url: string;
  /** HTTP/2 (cleartext) endpoint for the Bedrock runtime client. */
  bedrockEndpoint: string;
  requests: RecordedRequest[];
  /** Queues replies, consumed one per request in order. */
  reply(...replies: FakeReply[]): void;
  /** Answers every request the queue does not cover. */
  respondWith(fn: (request: RecordedRequest, index: number) => FakeReply): void;
  pending(): number;
  close(): Promise<void>;
}

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

function readBody(req: AnyRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function approxTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let responder: ((request: RecordedRequest, index: number) => FakeReply) | undefined;

  const send = (res: AnyResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    (res as ServerResponse).writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };

  const handle = async (req: AnyRequest, res: AnyResponse) => {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0] ?? '';
    const converse = /^\/model\/([^/]+)\/converse$/.exec(path);
    let recorded: RecordedRequest;
    try {
      const json: unknown = JSON.parse(raw.toString('utf8'));
      if (req.method === 'POST' && converse) {
        const body = ConverseBody.parse(json);
        recorded = {
          wire: 'bedrock',
          path,
          modelId: decodeURIComponent(converse[1]!),
          authorization: req.headers.authorization,
          bodyBytes: raw.length,
          system: (body.system ?? []).map((s) => s.text).join('\n'),
          messages: body.messages.map((m) => ({ role: m.role, content: m.content.map((c) => c.text).join('') })),
          maxTokens: body.inferenceConfig?.maxTokens ?? 0,
        };
      } else if (req.method === 'POST' && path === '/v1/chat/completions') {
        const body = ChatBody.parse(json);
        const [first, ...rest] = body.messages;
        if (first?.role !== 'system') throw new Error('the planner always sends its system prompt first');
        recorded = {
          wire: 'openai',
          path,
          modelId: body.model,
          authorization: req.headers.authorization,
          bodyBytes: raw.length,
          system: first.content,
          messages: rest.map((m) => {
            if (m.role === 'system') throw new Error('only the first message may be a system message');
            return { role: m.role, content: m.content };
          }),
          maxTokens: body.max_tokens ?? 0,
        };
      } else {
        send(res, 404, { message: `no route for ${req.method} ${path}` });
        return;
      }
    } catch (error) {
      send(res, 400, { message: `malformed request: ${(error as Error).message}` });
      return;
    }
    const index = requests.length;
    requests.push(recorded);
    const next = queue.shift() ?? responder?.(recorded, index);
    if (next === undefined) {
      send(res, 500, { message: `the fake model has no reply scripted for request ${index + 1}` });
      return;
    }
    const reply = typeof next === 'string' ? { text: next } : next;
    if ('status' in reply) {
      send(res, reply.status, reply.body);
      return;
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    const promptText = recorded.system + recorded.messages.map((m) => m.content).join('');
    const inputTokens = reply.inputTokens ?? approxTokens(promptText);
    const outputTokens = reply.outputTokens ?? approxTokens(reply.text);
    if (recorded.wire === 'bedrock') {
      send(res, 200, {
        output: { message: { role: 'assistant', content: [{ text: reply.text }] } },
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        stopReason: 'end_turn',
        metrics: { latencyMs: reply.delayMs ?? 1 },
      });
    } else {
      send(res, 200, {
        id: `chatcmpl-${index + 1}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: recorded.modelId,
        choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
      });
    }
  };

  const onRequest = (req: AnyRequest, res: AnyResponse) => {
    handle(req, res).catch((error: Error) => send(res, 500, { message: error.message }));
  };
  const http1 = createServer(onRequest);
  const http2 = createHttp2Server(onRequest);
  const sessions = new Set<{ destroy(): void }>();
  http2.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const url = await listen(http1);
  const bedrockEndpoint = await listen(http2);
  return {
    url,
    bedrockEndpoint,
    requests,
    reply: (...replies) => queue.push(...replies),
    respondWith: (fn) => {
      responder = fn;
    },
    pending: () => queue.length,
    close: async () => {
      http1.closeAllConnections();
      for (const session of sessions) session.destroy();
      await Promise.all([
        new Promise<void>((resolve) => http1.close(() => resolve())),
        new Promise<void>((resolve) => http2.close(() => resolve())),
      ]);
    },
  };
}
