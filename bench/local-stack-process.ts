import { startLocalStack, type LocalStack } from '../src/local/stack.js';

/**
 * The local stack (dynalite, s3rver, SES, Step Functions) in a process of its
 * own, forked by the Summarize measurement (summarize-scale.ts): the process
 * that runs Summarize then counts only Summarize's CPU and memory, as a Lambda
 * function would, and the emulators' CPU is reported beside it.
 *
 * Messages in: { dataDir, prefix, bucket }, then 'cpu' (any number), then 'stop'.
 * Messages out: { endpoints }, then { cpuMs } per 'cpu', then 'stopped'.
 */

interface StartMessage {
  dataDir: string;
  prefix: string;
  bucket: string;
}

let stack: LocalStack | undefined;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

process.on('message', (message: StartMessage | 'cpu' | 'stop') => {
  if (message === 'cpu') {
    process.send?.({ cpuMs: cpuMs() });
    return;
  }
  if (message === 'stop') {
    void (stack?.stop() ?? Promise.resolve()).then(() => {
      process.send?.('stopped');
      process.exit(0);
    });
    return;
  }
  void startLocalStack({ dataDir: message.dataDir, prefix: message.prefix, bucket: message.bucket, handlers: {} }).then(
    (started) => {
      stack = started;
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
