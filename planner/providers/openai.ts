import { z } from 'zod';
import { ModelCallError, withTimeout, type ModelReply, type ModelRequest, type PlannerModel } from './types.js';

/**
 * An OpenAI-compatible chat completions endpoint (vLLM, llama.cpp server,
 * Ollama, LM Studio, a hosted gateway): the self-hosted option for tasks whose
 * page content must not leave the network.
 */

export interface OpenAiCompatibleOptions {
  /** Base URL without /v1, e.g. http://127.0.0.1:8000. */
  baseUrl: string;
  model: string;
  timeoutMs: number;
  /** Sent as a bearer token when given; many self-hosted servers need none. */
  apiKey?: string;
}

const ChatCompletionResponse = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ role: z.string().optional(), content: z.string().nullable() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1, 'the response has no choices'),
  usage: z
    .object({ prompt_tokens: z.number().int().optional(), completion_tokens: z.number().int().optional() })
    .partial()
    .nullable()
    .optional(),
});

export class OpenAiCompatibleModel implements PlannerModel {
  readonly provider = 'openai';
  readonly modelId: string;
  private readonly url: string;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.modelId = options.model;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/v1/chat/completions`;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const started = performance.now();
    const body = {
      model: this.modelId,
      messages: [{ role: 'system', content: request.system }, ...request.messages],
      max_tokens: request.maxTokens,
      temperature: 0,
    };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) headers['authorization'] = `Bearer ${this.options.apiKey}`;
    const raw = await withTimeout(this.options.timeoutMs, `chat completion at ${this.url}`, async (signal) => {
      let response: Response;
      try {
        response = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
      } catch (error) {
        if (signal.aborted) throw error;
        throw new ModelCallError(`cannot reach ${this.url}: ${(error as Error).message}`, 'transport');
      }
      const text = await response.text();
      if (!response.ok) {
        throw new ModelCallError(`${this.url} answered HTTP ${response.status}: ${text.slice(0, 300)}`, 'http', response.status);
      }
      return text;
    });
    let parsed: z.infer<typeof ChatCompletionResponse>;
    try {
      parsed = ChatCompletionResponse.parse(JSON.parse(raw));
    } catch (error) {
      throw new ModelCallError(`unreadable chat completion from ${this.url}: ${(error as Error).message.slice(0, 300)}`, 'bad_response');
    }
    const choice = parsed.choices[0]!;
    return {
      text: choice.message.content ?? '',
      inputTokens: parsed.usage?.prompt_tokens,
      outputTokens: parsed.usage?.completion_tokens,
      latencyMs: Math.round(performance.now() - started),
    };
  }
}
