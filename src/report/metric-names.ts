/**
 * The metric names and namespace Paperclip emits, on their own so the CDK
 * dashboard and alarms can name them without loading the runtime's metrics
 * library.
 */
export const METRIC_NAMES = [
  'ItemProcessed',
  'WriteAttempted',
  'TaskCompleted',
  'HumanTakeover',
  'Misoperation',
  'RollbackAttempted',
  'RollbackSucceeded',
  'SessionLost',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

export const METRICS_NAMESPACE = 'Paperclip';
