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

/**
 * The functions whose handlers emit the item metrics (an item closes in
 * Complete or Takeover; Summarize counts stale items). Powertools gives each
 * document the `service` dimension, the function's name, so an alarm can sum
 * the plain metrics over these services with metric math: CloudWatch allows
 * Metrics Insights queries in an alarm only alone, and one per widget.
 */
export const ITEM_METRIC_SERVICES = ['complete', 'takeover', 'summarize-batch'] as const;

/** The dimension of the per-tenant copy of each item metric (the total copy carries only `service`). */
export const TENANT_DIMENSION = 'tenant';
