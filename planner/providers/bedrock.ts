import {
  BedrockRuntimeClient,
  ConverseCommand,
  type BedrockRuntimeClientConfig,
  type ContentBlock,
  type Message,
} from '@aws-sdk/client-bedrock-runtime';
import { ModelCallError, withTimeout, type ModelReply, type ModelRequest, type PlannerModel } from './types.js';

/**
 * Amazon Bedrock through the Converse API: one request shape for every model
 * family Bedrock hosts, so switching models is a config change.
 */

export interface BedrockConverseOptions {
  model: string;
  region: string;
  timeoutMs: number;
  /** A VPC endpoint, or a local fake speaking the Converse wire format. */
  endpoint?: string;
  /** Defaults to the SDK's provider chain (the Lambda role on AWS). */
  credentials?: BedrockRuntimeClientConfig['credentials'];
}

export class BedrockConverseModel implements PlannerModel {
  readonly provider = 'bedrock';
  readonly modelId: string;
  private readonly client: BedrockRuntimeClient;

  constructor(private readonly options: BedrockConverseOptions) {
    this.modelId = options.model;
    this.client = new BedrockRuntimeClient({
      region: options.region,
      endpoint: options.endpoint,
      credentials: options.credentials,
      // The planner decides about retries (a re-ask carries a reason); SDK retries would hide calls and tokens.
      maxAttempts: 1,
    });
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const started = performance.now();
    const messages: Message[] = request.messages.map((m) => ({ role: m.role, content: [{ text: m.content }] }));
    const command = new ConverseCommand({
      modelId: this.modelId,
      system: [{ text: request.system }],
      messages,
      inferenceConfig: { maxTokens: request.maxTokens, temperature: 0 },
    });
    const output = await withTimeout(this.options.timeoutMs, `Bedrock Converse (${this.modelId})`, async (signal) => {
      try {
        return await this.client.send(command, { abortSignal: signal });
      } catch (error) {
        if (signal.aborted) throw error;
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        const message = `Bedrock Converse (${this.modelId}) failed: ${(error as Error).name}: ${(error as Error).message.slice(0, 300)}`;
        if (status !== undefined) throw new ModelCallError(message, 'http', status);
        throw new ModelCallError(message, 'transport');
      }
    });
    const content: ContentBlock[] | undefined = output.output?.message?.content;
    if (!content) {
      throw new ModelCallError(`Bedrock Converse (${this.modelId}) returned no message (stopReason ${output.stopReason})`, 'bad_response');
    }
    const text = content.map((block) => ('text' in block && typeof block.text === 'string' ? block.text : '')).join('');
    return {
      text,
      inputTokens: output.usage?.inputTokens,
      outputTokens: output.usage?.outputTokens,
      latencyMs: Math.round(performance.now() - started),
    };
  }
}
