import type { BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
import type { PlannerConfig } from '../config.js';
import type { PlannerLogger } from '../log.js';
import { BedrockConverseModel } from './bedrock.js';
import { OpenAiCompatibleModel } from './openai.js';
import { ScriptedModel, type ScriptedAnswer } from './scripted.js';
import { ModelCallError, type ModelReply, type ModelRequest, type PlannerModel } from './types.js';

export * from './types.js';
export { BedrockConverseModel } from './bedrock.js';
export { OpenAiCompatibleModel } from './openai.js';
export { ScriptedModel, type ScriptedAnswer } from './scripted.js';

export interface ModelFactoryOptions {
  logger: PlannerLogger;
  /** Bedrock credentials; defaults to the SDK chain. */
  credentials?: BedrockRuntimeClientConfig['credentials'];
  /** Answers of the scripted provider. */
  script?: ScriptedAnswer[];
  env?: Record<string, string | undefined>;
}

/** Builds the provider the config names, wrapped so every call is logged as one JSON line. */
export function createPlannerModel(config: PlannerConfig, options: ModelFactoryOptions): PlannerModel {
  const env = options.env ?? process.env;
  let model: PlannerModel;
  switch (config.provider) {
    case 'bedrock':
      model = new BedrockConverseModel({
        model: config.model,
        region: config.region,
        timeoutMs: config.timeout_ms,
        endpoint: config.endpoint,
        credentials: options.credentials,
      });
      break;
    case 'openai': {
      const apiKey = config.api_key_env ? env[config.api_key_env] : undefined;
      if (config.api_key_env && !apiKey) {
        throw new Error(`planner config names api_key_env ${config.api_key_env}, but that environment variable is not set`);
      }
      model = new OpenAiCompatibleModel({ baseUrl: config.endpoint!, model: config.model, timeoutMs: config.timeout_ms, apiKey });
      break;
    }
    case 'scripted':
      model = new ScriptedModel(options.script ?? [], config.model);
      break;
  }
  return loggedModel(model, options.logger);
}

/** Logs one line per call: provider, model, prompt size, tokens, latency, outcome. */
export function loggedModel(model: PlannerModel, logger: PlannerLogger): PlannerModel {
  return {
    provider: model.provider,
    modelId: model.modelId,
    async complete(request: ModelRequest): Promise<ModelReply> {
      const promptChars = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
      const started = performance.now();
      try {
        const reply = await model.complete(request);
        logger.log('planner.model_call', {
          provider: model.provider,
          model: model.modelId,
          ok: true,
          promptChars,
          messages: request.messages.length,
          inputTokens: reply.inputTokens,
          outputTokens: reply.outputTokens,
          latencyMs: reply.latencyMs,
        });
        return reply;
      } catch (error) {
        logger.log('planner.model_call', {
          provider: model.provider,
          model: model.modelId,
          ok: false,
          promptChars,
          messages: request.messages.length,
          latencyMs: Math.round(performance.now() - started),
          errorKind: error instanceof ModelCallError ? error.kind : 'error',
          error: (error as Error).message.slice(0, 300),
        });
        throw error;
      }
    },
  };
}
