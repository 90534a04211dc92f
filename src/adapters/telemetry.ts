import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * Logs and traces the Powertools way. The logger writes one JSON object per
 * line (CloudWatch Logs on AWS); its level comes from POWERTOOLS_LOG_LEVEL or
 * the function's log level. The tracer records X-Ray subsegments for every
 * captured AWS SDK client; it switches itself off outside Lambda (locally, in
 * tests) and where POWERTOOLS_TRACE_ENABLED is "false" (functions deployed
 * without active tracing).
 */
const serviceName = process.env['POWERTOOLS_SERVICE_NAME'] ?? 'paperclip';

export const logger = new Logger({ serviceName });
export const tracer = new Tracer({ serviceName });

/** What every log line of one invocation carries, so a write's lines are found by its key. */
export interface Correlation {
  step: string;
  tenant?: string;
  idempotencyKey?: string;
  execution?: string;
  requestId?: string;
}

// The embedded stack runs many invocations at once in one process: each gets its own child logger.
const invocation = new AsyncLocalStorage<Logger>();

/** The logger of the running invocation (with its correlation keys), or the process logger outside one. */
export function log(): Logger {
  return invocation.getStore() ?? logger;
}

/** Runs `work` with a child logger that adds `correlation` to every line it writes. */
export function withCorrelation<T>(correlation: Correlation, work: () => Promise<T>): Promise<T> {
  const keys = Object.fromEntries(Object.entries(correlation).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return invocation.run(logger.createChild({ persistentKeys: keys }), work);
}
