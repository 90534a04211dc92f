import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServices, type WiredServices } from '../src/composition/services.js';
import { startLocalStack } from '../twin/aws/stack.js';
import { ask, isObjectWith } from './forked-emulators.js';

/**
 * Paperclip's services on a local stack with no vendor and no handlers, for the measurements that call the app
 * layer directly (Summarize at scale, the late seal): the stack in this process (in memory, S3 in a temporary
 * folder), or forked (local-stack-process.ts, `services: 'all'`) so the measured process counts only its own CPU
 * and memory, as a Lambda function would.
 */
export interface LocalServices {
  services: WiredServices;
  /** The forked emulators' CPU so far (0 in this process: theirs is counted as ours). */
  emulatorCpuMs(): Promise<number>;
  stop(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./local-stack-process.ts', import.meta.url));
/** The services never reach a vendor here; the base URL only has to parse. */
const NO_VENDOR = 'http://127.0.0.1:9';

export async function startLocalServices(options: {
  forked?: boolean;
  configPath?: string;
  /** The forked stack's data folder is a new temporary folder with this prefix, removed on stop. */
  dataDirPrefix?: string;
}): Promise<LocalServices> {
  const config = resolve(options.configPath ?? 'config/paperclip.local.yaml');
  // The config's prefix and bucket, so the stack has the tables and bucket the services look for.
  const probe = createServices({ PAPERCLIP_CONFIG: config, PAPERCLIP_VENDOR_BASE_URL: NO_VENDOR });
  const { prefix, evidence } = probe.config;
  probe.close();
  const wire = (endpoints: Record<string, string>) =>
    createServices({
      PAPERCLIP_CONFIG: config,
      PAPERCLIP_VENDOR_BASE_URL: NO_VENDOR,
      PAPERCLIP_AWS_REGION: 'us-east-1',
      PAPERCLIP_DYNAMODB_ENDPOINT: endpoints['dynamodb'],
      PAPERCLIP_S3_ENDPOINT: endpoints['s3'],
      PAPERCLIP_SES_ENDPOINT: endpoints['ses'],
      PAPERCLIP_SFN_ENDPOINT: endpoints['stepfunctions'],
    });
  if (!options.forked) {
    const stack = await startLocalStack({ prefix, bucket: evidence.bucket, handlers: {} });
    const services = wire(stack.endpoints);
    return {
      services,
      emulatorCpuMs: () => Promise.resolve(0),
      async stop() {
        services.close();
        await stack.stop();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), options.dataDirPrefix ?? 'paperclip-local-services-'));
  const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const stopChild = async () => {
    await ask(child, 'stop', (m): m is 'stopped' => m === 'stopped').catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await ask(child, undefined, (m): m is 'ready' => m === 'ready');
    const started = await ask(child, { services: 'all', dataDir, prefix, bucket: evidence.bucket }, isObjectWith('endpoints'));
    const services = wire(started.endpoints as Record<string, string>);
    return {
      services,
      emulatorCpuMs: async () => (await ask(child, 'cpu', isObjectWith('cpuMs'))).cpuMs as number,
      async stop() {
        services.close();
        await stopChild();
      },
    };
  } catch (error) {
    await stopChild();
    throw error;
  }
}
