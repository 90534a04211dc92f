import { NamedError } from '../../src/domain/errors.js';
/**
 * The one interface every language model sits behind. The planner only ever
 * sends a system prompt plus a short conversation and reads back text; tool
 * use, streaming and provider-specific JSON modes are deliberately not used,
 * so a self-hosted model and Bedrock are interchangeable.
 */

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  maxTokens: number;
}

export interface ModelReply {
  text: string;
  inputTokens?: number;
  outputTokens?: number;
  latencyMs: number;
}

export interface PlannerModel {
  /** bedrock | openai | scripted: recorded in drafts and logs. */
  readonly provider: string;
  readonly modelId: string;
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** The call did not produce an answer (timeout, transport, HTTP status, unreadable body). */
export class ModelCallError extends NamedError {
  override name = 'ModelCallError';
  constructor(
    message: string,
    readonly kind: 'timeout' | 'http' | 'transport' | 'bad_response',
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Runs `work` with an AbortSignal that fires after timeoutMs; a fired signal becomes a timeout error. */
export async function withTimeout<T>(timeoutMs: number, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw new ModelCallError(`${what} timed out after ${timeoutMs} ms`, 'timeout');
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
