import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Logs and traces the Powertools way. The logger writes one JSON object per
 * line (CloudWatch Logs on AWS); its level comes from POWERTOOLS_LOG_LEVEL or
 * the function's log level. The tracer records X-Ray subsegments for every
 * captured AWS SDK client, only in Lambda and only where POWERTOOLS_TRACE_ENABLED
 * is not "false" (functions deployed without active tracing).
 */
const serviceName = process.env['POWERTOOLS_SERVICE_NAME'] ?? 'paperclip';

export const logger = new Logger({ serviceName });

/**
 * Whether X-Ray subsegments are recorded here: the Powertools tracer's own rule (in Lambda, not SAM local, not
 * switched off). The tracer is loaded only then, because the X-Ray SDK installs a process-wide async hook as soon
 * as it is imported, tracing or not, and that hook taxes every promise the process makes (Playwright makes many).
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env['AWS_EXECUTION_ENV']) && env['AWS_SAM_LOCAL'] !== 'true' && env['POWERTOOLS_TRACE_ENABLED']?.toLowerCase() !== 'false';
}

const tracer = tracingEnabled() ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName }) : undefined;

/** An AWS SDK client whose calls become X-Ray subsegments where tracing is on; the client itself elsewhere. */
export function traced<C>(client: C): C {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}

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
