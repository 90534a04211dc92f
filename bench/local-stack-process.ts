import { join } from 'node:path';
import { z } from 'zod';
import { startLocalDynamoDb } from '../twin/aws/dynamodb.js';
import { startLocalS3 } from '../twin/aws/s3.js';
import { startLocalSes } from '../twin/aws/ses.js';
import { startLocalStack } from '../twin/aws/stack.js';

/**
 * Local emulators in a process of their own, so the process being measured
 * counts only its own CPU and memory, as a Lambda function would, and the
 * emulators' CPU is reported beside it.
 *
 * - `services: 'all'` (Summarize at scale and the late seal, through
 *   local-services.ts): the whole local stack (dynalite, s3rver, SES, Step
 *   Functions), as the app layer is called directly and needs no handlers.
 * - `services: 'emulators'` (the guarded runs, run-bench.ts): DynamoDB, S3 and
 *   SES only; the Step Functions runner must call the handlers in the
 *   benchmark's process, so the benchmark starts it there, against these.
 *
 * Messages in: { services, dataDir, prefix, bucket }, then 'cpu' (any number), then 'stop'.
 * Messages out: 'ready', then { endpoints }, then { cpuMs } per 'cpu', then 'stopped'.
 */

const StartMessage = z
  .object({
    services: z.enum(['all', 'emulators']).default('all'),
    dataDir: z.string().min(1),
    prefix: z.string().min(1),
    bucket: z.string().min(1),
  })
  .strict();
type StartMessage = z.infer<typeof StartMessage>;

interface Running {
  endpoints: Record<string, string>;
  stop(): Promise<void>;
}

let running: Running | undefined;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function startEmulators(start: StartMessage): Promise<Running> {
  const [dynamodb, s3, ses] = await Promise.all([
    startLocalDynamoDb({ path: join(start.dataDir, 'dynamodb') }),
    startLocalS3({ directory: join(start.dataDir, 's3'), buckets: [start.bucket] }),
    startLocalSes(),
  ]);
  return {
    endpoints: { dynamodb: dynamodb.endpoint, s3: s3.endpoint, ses: ses.endpoint, sesInbox: ses.inboxUrl },
    async stop() {
      await Promise.allSettled([ses.stop(), s3.stop(), dynamodb.stop()]);
    },
  };
}

async function start(message: unknown): Promise<Running> {
  const parsed = StartMessage.safeParse(message);
  if (!parsed.success) {
    throw new Error(
      `local-stack-process: bad start message (${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})`,
    );
  }
  const m = parsed.data;
  if (m.services === 'emulators') return startEmulators(m);
  return startLocalStack({ dataDir: m.dataDir, prefix: m.prefix, bucket: m.bucket, handlers: {} });
}

process.on('message', (message: unknown) => {
  if (message === 'cpu') {
    process.send?.({ cpuMs: cpuMs() });
    return;
  }
  if (message === 'stop') {
    void (running?.stop() ?? Promise.resolve()).then(() => {
      process.send?.('stopped');
      process.exit(0);
    });
    return;
  }
  void start(message).then(
    (started) => {
      running = started;
      process.send?.({ endpoints: started.endpoints });
    },
    (error: unknown) => {
      process.stderr.write(`local stack: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
});
// Never outlive the measurement that forked it (a parent that crashed or was stopped).
process.on('disconnect', () => process.exit(0));
process.send?.('ready');
