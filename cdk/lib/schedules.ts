import { Duration, Stack, TimeZone } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ContextAttribute, Schedule, ScheduleExpression, ScheduleTargetInput, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { DeploymentConfig } from '../config.js';
import { scheduleName, scheduleRequester } from '../../src/contracts/schedule-requester.js';

/**
 * The batch input a schedule sends. The task id comes from the scheduled
 * time, not the attempt: a retried or duplicated delivery of the same tick
 * produces the same task id, hence the same idempotency keys, hence no second
 * write for any item.
 */
export function scheduledBatchInput(prefix: string, tenant: string): { tenant: string; taskId: string; requestedBy: string } {
  // The requester is the schedule's own name, fixed here: ReadList accepts it unattested only in this form, for this tenant.
  return { tenant, taskId: `T-${tenant}-${ContextAttribute.scheduledTime}`, requestedBy: scheduleRequester(prefix, tenant) };
}

/** One EventBridge Scheduler schedule per tenant, each starting the batch workflow. */
export class BatchSchedules extends Construct {
  readonly schedules: ReadonlyMap<string, Schedule>;
  readonly role: Role;
  readonly deadLetters: Queue;

  constructor(scope: Construct, id: string, props: { prefix: string; tenants: DeploymentConfig['tenants']; batch: IStateMachine }) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        // Only this account's schedules may use the role (confused-deputy guard).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'Lets EventBridge Scheduler start the Paperclip batch workflow, and nothing else',
    });
    this.deadLetters = new Queue(this, 'DeadLetters', {
      queueName: `${props.prefix}-schedule-dead-letters`,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    const schedules = new Map<string, Schedule>();
    for (const tenant of props.tenants) {
      schedules.set(
        tenant.id,
        new Schedule(this, `Tenant-${tenant.id}`, {
          scheduleName: scheduleName(props.prefix, tenant.id),
          description: `Paperclip batch for tenant ${tenant.id}`,
          schedule: ScheduleExpression.expression(tenant.schedule.expression, TimeZone.of(tenant.schedule.timezone)),
          enabled: tenant.schedule.enabled,
          // Batches run at the time operators expect; the claims make overlap harmless, not desirable.
          timeWindow: TimeWindow.off(),
          target: new StepFunctionsStartExecution(props.batch, {
            input: ScheduleTargetInput.fromObject(scheduledBatchInput(props.prefix, tenant.id)),
            role: this.role,
            retryAttempts: 3,
            maxEventAge: Duration.hours(1),
            deadLetterQueue: this.deadLetters,
          }),
        }),
      );
    }
    this.schedules = schedules;
  }
}
