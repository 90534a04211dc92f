import type { ModelReply, ModelRequest, PlannerModel } from './types.js';

/**
 * A model whose answers are written in advance: for tests of the planner's
 * own logic and for deterministic demos. Each answer is a string, or a
 * function of the request (to answer according to the prompt).
 */

export type ScriptedAnswer = string | ((request: ModelRequest) => string);

export class ScriptedModel implements PlannerModel {
  readonly provider = 'scripted';
  readonly requests: ModelRequest[] = [];
  private readonly queue: ScriptedAnswer[];

  constructor(
    answers: ScriptedAnswer[],
    readonly modelId = 'scripted',
    /** Answers once the queue is empty; without it an empty queue is an error. */
    private readonly fallback?: ScriptedAnswer,
  ) {
    this.queue = [...answers];
  }

  push(...answers: ScriptedAnswer[]): void {
    this.queue.push(...answers);
  }

  get remaining(): number {
    return this.queue.length;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.requests.push(request);
    const next = this.queue.shift() ?? this.fallback;
    if (next === undefined) throw new Error(`the scripted model has no answer left for call ${this.requests.length}`);
    const text = typeof next === 'function' ? next(request) : next;
    return { text, latencyMs: 0, inputTokens: approxTokens(request), outputTokens: Math.ceil(text.length / 4) };
  }
}

function approxTokens(request: ModelRequest): number {
  const chars = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
  return Math.ceil(chars / 4);
}
