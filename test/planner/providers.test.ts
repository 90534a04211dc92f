import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlannerConfig } from '../../planner/config.js';
import { memoryLogger } from '../../planner/log.js';
import { createPlannerModel, ModelCallError } from '../../planner/providers/index.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';

let fake: FakeModelServer;
before(async () => {
  fake = await startFakeModelServer();
});
after(() => fake.close());

const localCredentials = { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' };
const request = {
  system: 'answer with JSON',
  messages: [{ role: 'user' as const, content: '把今天待处理的差异导出成CSV' }],
  maxTokens: 256,
};

test('bedrock provider speaks Converse to the overridden endpoint and reports tokens', async () => {
  const logger = memoryLogger();
  const config = parsePlannerConfig({
    provider: 'bedrock',
    model: 'anthropic.claude-3-haiku-20240307-v1:0',
    endpoint: fake.bedrockEndpoint,
  });
  const model = createPlannerModel(config, { logger, credentials: localCredentials });
  fake.reply({ text: '[{"action":"screenshot","as":"page"}]', inputTokens: 120, outputTokens: 9 });
  const reply = await model.complete(request);
  assert.equal(reply.text, '[{"action":"screenshot","as":"page"}]');
  assert.equal(reply.inputTokens, 120);
  assert.equal(reply.outputTokens, 9);
  const seen = fake.requests.at(-1)!;
  assert.equal(seen.wire, 'bedrock');
  assert.equal(seen.modelId, 'anthropic.claude-3-haiku-20240307-v1:0');
  assert.equal(seen.system, 'answer with JSON');
  assert.deepEqual(seen.messages, request.messages);
  assert.equal(seen.maxTokens, 256);
  assert.match(seen.authorization ?? '', /^AWS4-HMAC-SHA256 Credential=AKIDLOCAL\//, 'requests are SigV4-signed like the real service');
  const [line] = logger.events('planner.model_call');
  assert.equal(line?.['provider'], 'bedrock');
  assert.equal(line?.['inputTokens'], 120);
  assert.equal(line?.['outputTokens'], 9);
  assert.equal(line?.['ok'], true);
});

test('openai provider posts chat completions with an optional bearer key', async () => {
  const logger = memoryLogger();
  const config = parsePlannerConfig({
    provider: 'openai',
    model: 'qwen2.5-7b-instruct',
    endpoint: `${fake.url}/`,
    api_key_env: 'PLANNER_KEY',
  });
  const model = createPlannerModel(config, { logger, env: { PLANNER_KEY: 'sk-local' } });
  fake.reply({ text: '[]', inputTokens: 50, outputTokens: 1 });
  const reply = await model.complete(request);
  assert.equal(reply.text, '[]');
  assert.equal(reply.inputTokens, 50);
  const seen = fake.requests.at(-1)!;
  assert.equal(seen.wire, 'openai');
  assert.equal(seen.modelId, 'qwen2.5-7b-instruct');
  assert.equal(seen.authorization, 'Bearer sk-local');
  assert.equal(seen.system, 'answer with JSON');

  const keyless = createPlannerModel(parsePlannerConfig({ provider: 'openai', model: 'local', endpoint: fake.url }), { logger });
  fake.reply('ok');
  await keyless.complete(request);
  assert.equal(fake.requests.at(-1)!.authorization, undefined);
});

test('a slow model is cut off by the timeout and the failed call is logged', async () => {
  for (const provider of ['bedrock', 'openai'] as const) {
    const logger = memoryLogger();
    const endpoint = provider === 'bedrock' ? fake.bedrockEndpoint : fake.url;
    const config = parsePlannerConfig({ provider, model: 'slow-model', endpoint, timeout_ms: 200 });
    const model = createPlannerModel(config, { logger, credentials: localCredentials });
    fake.reply({ text: '[]', delayMs: 1500 });
    await assert.rejects(model.complete(request), (error: unknown) => error instanceof ModelCallError && error.kind === 'timeout');
    const [line] = logger.events('planner.model_call');
    assert.equal(line?.['ok'], false, provider);
    assert.equal(line?.['errorKind'], 'timeout', provider);
  }
});

test('HTTP errors surface with their status', async () => {
  for (const provider of ['bedrock', 'openai'] as const) {
    const endpoint = provider === 'bedrock' ? fake.bedrockEndpoint : fake.url;
    const config = parsePlannerConfig({ provider, model: 'm', endpoint });
    const model = createPlannerModel(config, { logger: memoryLogger(), credentials: localCredentials });
    fake.reply({ status: 503, body: JSON.stringify({ message: 'overloaded' }) });
    await assert.rejects(
      model.complete(request),
      (error: unknown) => error instanceof ModelCallError && error.kind === 'http' && error.status === 503,
    );
  }
});

test('planner config names the field and the fix', () => {
  assert.throws(() => parsePlannerConfig({ provider: 'openai', model: 'm' }), /endpoint: the openai provider needs endpoint/);
  assert.throws(() => parsePlannerConfig({ provider: 'gpt', model: 'm' }), /provider/);
  assert.throws(() => parsePlannerConfig({ provider: 'bedrock', model: 'm', api_key: 'sk' }), /api_key/);
});

test('the scripted provider answers in order, from the same config path, and says when it runs dry', async () => {
  const logger = memoryLogger();
  const model = createPlannerModel(parsePlannerConfig({ provider: 'scripted', model: 'demo' }), {
    logger,
    script: ['[]', (r) => `[{"action":"screenshot","as":"n${r.messages.length}"}]`],
  });
  assert.equal((await model.complete(request)).text, '[]');
  assert.equal((await model.complete(request)).text, '[{"action":"screenshot","as":"n1"}]');
  await assert.rejects(model.complete(request), /no answer left for call 3/);
  assert.deepEqual(
    logger.events('planner.model_call').map((e) => e['ok']),
    [true, true, false],
  );
});
