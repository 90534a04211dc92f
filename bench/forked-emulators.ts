import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/**
 * DynamoDB, S3 and SES emulators in a forked process (local-stack-process.ts,
 * `services: 'emulators'`), for a guarded run whose Step Functions runner and
 * handlers stay in the benchmark's process. On AWS these services are not
 * Lambda CPU, so the benchmark keeps their CPU out of Paperclip's.
 */

const CHILD = fileURLToPath(new URL('./local-stack-process.ts', import.meta.url));

const Endpoints = z
  .object({ dynamodb: z.string().url(), s3: z.string().url(), ses: z.string().url(), sesInbox: z.string().url() })
  .strict();
export type EmulatorEndpoints = z.infer<typeof Endpoints>;

export interface ForkedEmulators {
  endpoints: EmulatorEndpoints;
  /** The child's pid, so the CPU sampler can follow it beside the Chromium tree. */
  pid: number;
  /** The child's own CPU since it started (user + system), as it reports it. */
  cpuMs(): Promise<number>;
  /** Stops the emulators and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Sends `message` (if any) to the forked local stack process and waits for the first answer `accept` takes. */
export function ask<T>(child: ChildProcess, message: unknown, accept: (m: unknown) => m is T): Promise<T> {
  return new Promise<T>((done, fail) => {
    const onMessage = (m: unknown) => {
      if (!accept(m)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      done(m);
    };
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      fail(new Error(`the forked local stack process exited with code ${code} (its error is on stderr above)`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (message !== undefined) child.send(message as never);
  });
}

/** Accepts an answer that is an object carrying `key`. */
export const isObjectWith =
  <K extends string>(key: K) =>
  (m: unknown): m is Record<K, unknown> =>
    typeof m === 'object' && m !== null && key in m;

/** Forks the emulators with their data under `dataDir` (dynamodb/, s3/) and the evidence bucket created. */
export async function startForkedEmulators(options: { dataDir: string; prefix: string; bucket: string }): Promise<ForkedEmulators> {
  const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    await ask(child, undefined, (m): m is 'ready' => m === 'ready');
    const started = await ask(child, { services: 'emulators', ...options }, isObjectWith('endpoints'));
    const endpoints = Endpoints.parse(started['endpoints']);
    let stopping: Promise<void> | undefined;
    return {
      endpoints,
      pid: child.pid!,
      async cpuMs() {
        const answer = await ask(child, 'cpu', isObjectWith('cpuMs'));
        return z.number().parse(answer['cpuMs']);
      },
      stop() {
        stopping ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) {
            await ask(child, 'stop', (m): m is 'stopped' => m === 'stopped').catch(() => undefined);
          }
          await exited;
        })();
        return stopping;
      },
    };
  } catch (error) {
    child.kill();
    await exited;
    throw error;
  }
}
