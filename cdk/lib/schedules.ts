import { Duration, Stack, TimeZone } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ContextAttribute, Schedule, ScheduleExpression, ScheduleTargetInput, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { DeploymentConfig } from '../config.js';
import { scheduleName } from '../../src/workflow/schedule-requester.js';
import type { PaperclipFunction } from './paperclip-function.js';

/**
 * What a schedule sends its entry point: the tenant and the time the schedule
 * fired. The entry point makes the task id from the scheduled time, not the
 * attempt: a retried or duplicated delivery of the same tick produces the same
 * task id (and execution name), hence the same idempotency keys, hence no
 * second write for any item. It names the requester itself, from the tenant.
 */
export function scheduledStartInput(tenant: string): { tenant: string; scheduledTime: string } {
  return { tenant, scheduledTime: ContextAttribute.scheduledTime };
}

/**
 * One EventBridge Scheduler schedule per tenant, each invoking the schedules' entry point
 * (start-scheduled-batch), which attests the schedule as requester and starts the batch workflow. The
 * scheduler's role may invoke that function and nothing else; that function's role is the only one
 * granted StartExecution on the batch workflow, so no other role can start a batch credited to a schedule
 * (ReadList takes no requester unattested).
 */
export class BatchSchedules extends Construct {
  readonly schedules: ReadonlyMap<string, Schedule>;
  readonly role: Role;
  readonly deadLetters: Queue;

  constructor(
    scope: Construct,
    id: string,
    props: { prefix: string; tenants: DeploymentConfig['tenants']; batch: IStateMachine; starter: PaperclipFunction },
  ) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        // Only this account's schedules may use the role (confused-deputy guard).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'Lets EventBridge Scheduler invoke the Paperclip schedule entry point, and nothing else',
    });
    // The entry point starts the batch workflow, and only it: the grant lives on its role, with the ARN it needs.
    props.batch.grantStartExecution(props.starter.role);
    props.starter.fn.addEnvironment('PAPERCLIP_BATCH_ARN', props.batch.stateMachineArn);
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
          target: new LambdaInvoke(props.starter.fn, {
            input: ScheduleTargetInput.fromObject(scheduledStartInput(tenant.id)),
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
