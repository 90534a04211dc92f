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
 * Complete, stale ones included, or Takeover). Powertools gives each
 * document the `service` dimension, the function's name, so an alarm can sum
 * the plain metrics over these services with metric math: CloudWatch allows
 * Metrics Insights queries in an alarm only alone, and one per widget.
 */
export const ITEM_METRIC_SERVICES = ['complete', 'takeover'] as const;

/**
 * Functions that emit one metric outside a closing item: ValidateRoute counts a
 * session lost at routing (before any claim) as SessionLost, and nothing else.
 * Kept per metric so the rates' alarms stay within CloudWatch's 10 metrics.
 */
const OTHER_METRIC_SERVICES: Partial<Record<MetricName, readonly string[]>> = { SessionLost: ['validate-route'] };

/** Every function that emits `metric`, the services an alarm or a total sums it over. */
export function servicesEmitting(metric: MetricName): readonly string[] {
  return [...ITEM_METRIC_SERVICES, ...(OTHER_METRIC_SERVICES[metric] ?? [])];
}

/** The dimension of the per-tenant copy of each item metric (the total copy carries only `service`). */
export const TENANT_DIMENSION = 'tenant';
