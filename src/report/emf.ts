import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ItemFacts } from './classify.js';

/** How an item closed (src/evidence/item-closed.ts passes it). */
export type CloseKind = 'done' | 'takeover' | 'rejected' | 'expired' | 'stale' | 'blocked';
import { METRIC_NAMES, METRICS_NAMESPACE, TENANT_DIMENSION, type MetricName } from '../contracts/metric-names.js';

/**
 * The four metrics per item as CloudWatch EMF, through Powertools. Names and
 * the `tenant` dimension are what the CDK dashboard and alarms query
 * (namespace Paperclip).
 *
 * Powertools writes EMF to stdout. Outside Lambda that would land in the
 * middle of CLI output (the demo prints one JSON line), so unless
 * POWERTOOLS_METRICS_DISABLED says otherwise, metrics are only written when
 * running in Lambda. POWERTOOLS_DEV=true routes them through console.log.
 */

export function metricsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const flag = env['POWERTOOLS_METRICS_DISABLED'];
  if (flag !== undefined) return !['1', 'true', 'yes', 'on', 'y'].includes(flag.trim().toLowerCase());
  return Boolean(env['AWS_LAMBDA_FUNCTION_NAME']);
}

let metrics: Metrics | undefined;
function instance(): Metrics {
  metrics ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env['POWERTOOLS_SERVICE_NAME'] ?? 'paperclip' });
  return metrics;
}

/** The values one closed item contributes; zeros are emitted too so every series has data points. */
export function itemMetricValues(facts: ItemFacts, close: CloseKind): Record<MetricName, number> {
  // A compensation run is counted as a rollback when it closes (whether the workflow or an
  // operator started it), not as an item of its own; it succeeded when its readback confirmed.
  const rollback = facts.compensates !== undefined;
  const item = rollback ? 0 : 1;
  return {
    ItemProcessed: item,
    // The report's misoperation denominator: items and compensation runs that committed at least once.
    WriteAttempted: facts.commits > 0 ? 1 : 0,
    TaskCompleted: item && close === 'done' ? 1 : 0,
    HumanTakeover: item && close === 'takeover' ? 1 : 0,
    Misoperation: facts.misoperation ? 1 : 0,
    RollbackAttempted: rollback ? 1 : 0,
    RollbackSucceeded: rollback && close === 'done' ? 1 : 0,
    SessionLost: facts.sessionLost ? 1 : 0,
  };
}

/** Emits one EMF document for a closed item (when enabled); returns the values for callers that log them. */
export function emitItemMetrics(facts: ItemFacts, close: CloseKind): Record<MetricName, number> {
  const values = itemMetricValues(facts, close);
  if (!metricsEnabled()) return values;
  const m = instance();
  // Two documents: the totals under `service` only (what alarms and rates sum as plain metrics),
  // and the same values per tenant (service and tenant) for the per-tenant view.
  for (const tenant of [undefined, facts.tenant]) {
    if (tenant) m.addDimension(TENANT_DIMENSION, tenant);
    for (const name of METRIC_NAMES) m.addMetric(name, MetricUnit.Count, values[name]);
    m.addMetadata('key', facts.key);
    m.addMetadata('taskId', facts.taskId);
    m.publishStoredMetrics();
  }
  return values;
}

/**
 * One SessionLost count for a session loss seen outside a closing item (at
 * routing, before any claim), so the session-lost alarm fires for it as for one
 * seen during the write. The other item metrics are not emitted: no item closed.
 */
export function emitSessionLost(tenant: string): void {
  if (!metricsEnabled()) return;
  const m = instance();
  for (const dimension of [undefined, tenant]) {
    if (dimension) m.addDimension(TENANT_DIMENSION, dimension);
    m.addMetric('SessionLost', MetricUnit.Count, 1);
    m.publishStoredMetrics();
  }
}
