import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { servicesEmitting, METRIC_NAMES, METRICS_NAMESPACE, TENANT_DIMENSION, type MetricName } from '../../src/contracts/metric-names.js';

/** The EMF metric names the handlers emit, from the module that emits them. */
export const PAPERCLIP_METRICS = METRIC_NAMES;
export type PaperclipMetric = MetricName;

/**
 * One metric summed over the functions that emit it, as metric math over plain
 * metrics (the `service`-only copy the handlers emit). Not a Metrics Insights
 * query: CloudWatch evaluates an alarm on one such query alone, never two
 * combined in math, and runs one query per dashboard widget.
 */
export function total(metric: PaperclipMetric, period: Duration, label?: string): MathExpression {
  const usingMetrics: Record<string, Metric> = {};
  servicesEmitting(metric).forEach((service, index) => {
    // Ids unique per metric: a rate nests two totals in one expression.
    usingMetrics[`${metric.toLowerCase()}_${index}`] = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: metric,
      dimensionsMap: { service },
      statistic: 'Sum',
      period,
    });
  });
  // FILL(…, 0): a function that emitted nothing in the period counts as 0, not as a gap that blanks the sum.
  const expression = Object.keys(usingMetrics)
    .map((id) => `FILL(${id}, 0)`)
    .join(' + ');
  return new MathExpression({ expression, usingMetrics, period, label: label ?? metric });
}

/** numerator / denominator, 0 when nothing was processed (no division by zero, no false alarm). */
export function rate(label: string, numerator: PaperclipMetric, denominator: PaperclipMetric, period: Duration): MathExpression {
  return new MathExpression({
    expression: 'IF(d > 0, n / d, 0)',
    usingMetrics: { n: total(numerator, period), d: total(denominator, period) },
    period,
    label,
  });
}

export const RATE_DEFINITIONS = [
  // Same terms as `paperclip report`: misoperated writes over write attempts (compensation runs included).
  { label: 'Misoperation rate', numerator: 'Misoperation', denominator: 'WriteAttempted' },
  { label: 'Task completion rate', numerator: 'TaskCompleted', denominator: 'ItemProcessed' },
  { label: 'Human takeover rate', numerator: 'HumanTakeover', denominator: 'ItemProcessed' },
  { label: 'Rollback success rate', numerator: 'RollbackSucceeded', denominator: 'RollbackAttempted' },
] as const;

export interface ObservabilityProps {
  prefix: string;
  alarmAddress: string;
  takeoverRateThreshold: number;
  workflows: readonly StateMachine[];
  scheduleDeadLetters: IQueue;
}

/** The four rates on a dashboard, alarms on what must never happen, one encrypted topic for people. */
export class Observability extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Record<string, Alarm> = {};

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);

    // A customer key because CloudWatch must be allowed to use it; the AWS managed SNS key cannot grant that.
    const key = new Key(this, 'AlarmTopicKey', {
      alias: `alias/${props.prefix}-alarms`,
      description: 'Encrypts Paperclip alarm notifications',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchPublishesAlarms',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new Topic(this, 'AlarmTopic', {
      topicName: `${props.prefix}-alarms`,
      displayName: 'Paperclip alarms',
      masterKey: key,
      enforceSSL: true,
    });
    this.topic.addSubscription(new EmailSubscription(props.alarmAddress));
    const notify = new SnsAction(this.topic);

    const fiveMinutes = Duration.minutes(5);
    const hour = Duration.hours(1);
    const alarm = (id: string, description: string, metric: IMetric, threshold: number) => {
      const created = new Alarm(this, id, {
        alarmName: `${props.prefix}-${id}`,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        // No items, no data: that is quiet, not broken.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(notify);
      this.alarms[id] = created;
      return created;
    };

    alarm(
      'misoperation',
      'A write changed the vendor into a state nobody asked for. Open the item evidence and compensate or take over now.',
      total('Misoperation', fiveMinutes),
      0,
    );
    alarm(
      'takeover-rate',
      `More than ${props.takeoverRateThreshold * 100}% of items in the last hour went to ` +
        `human takeover: a site change, a session problem or a policy that refuses too much.`,
      rate('Human takeover rate', 'HumanTakeover', 'ItemProcessed', hour),
      props.takeoverRateThreshold,
    );
    alarm(
      'session-lost',
      'A vendor session ended mid-task (login page or permission dialog). Check the service identity before the next batch.',
      total('SessionLost', fiveMinutes),
      0,
    );
    for (const workflow of props.workflows) {
      const name = workflow.node.id;
      alarm(
        `${name.toLowerCase()}-workflow-failures`,
        `${name} executions failed, timed out or were aborted: items may be left in takeover or unprocessed.`,
        new MathExpression({
          expression: 'failed + timedOut + aborted',
          usingMetrics: {
            failed: workflow.metricFailed({ period: fiveMinutes, statistic: 'Sum' }),
            timedOut: workflow.metricTimedOut({ period: fiveMinutes, statistic: 'Sum' }),
            aborted: workflow.metricAborted({ period: fiveMinutes, statistic: 'Sum' }),
          },
          period: fiveMinutes,
          label: `${name} failures`,
        }),
        0,
      );
    }
    alarm(
      'schedule-dead-letters',
      'EventBridge Scheduler could not start a batch after retries; the event is in the dead-letter queue.',
      props.scheduleDeadLetters.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
      0,
    );

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${props.prefix}-operations`,
      defaultInterval: Duration.days(7),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          "## Paperclip\nRates per hour from the handlers' EMF metrics (namespace `Paperclip`), summed over tenants. " +
          'Targets come from measurement: compare against the counts below before changing an alarm threshold.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      ...RATE_DEFINITIONS.map(
        (definition) =>
          new GraphWidget({
            title: definition.label,
            left: [rate(definition.label, definition.numerator, definition.denominator, hour)],
            leftYAxis: { min: 0, max: 1 },
            width: 6,
            height: 6,
          }),
      ),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Counts per hour',
        left: PAPERCLIP_METRICS.map((metric) => total(metric, hour)),
        width: 12,
        height: 6,
      }),
      new GraphWidget({
        title: 'Items processed per tenant',
        left: [
          new MathExpression({
            // The only Metrics Insights query, alone in its widget (CloudWatch runs one per widget), over the per-tenant copies.
            expression: `SELECT SUM(ItemProcessed) FROM SCHEMA("${METRICS_NAMESPACE}", service, ${TENANT_DIMENSION}) GROUP BY ${TENANT_DIMENSION}`,
            period: hour,
            label: 'ItemProcessed',
          }),
        ],
        width: 12,
        height: 6,
      }),
    );
    this.dashboard.addWidgets(
      ...props.workflows.map(
        (workflow) =>
          new GraphWidget({
            title: `${workflow.node.id} executions`,
            left: [
              workflow.metricStarted({ period: hour, statistic: 'Sum' }),
              workflow.metricSucceeded({ period: hour, statistic: 'Sum' }),
              workflow.metricFailed({ period: hour, statistic: 'Sum' }),
              workflow.metricTimedOut({ period: hour, statistic: 'Sum' }),
            ],
            width: 12,
            height: 6,
          }),
      ),
    );
  }
}
